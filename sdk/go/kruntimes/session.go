package kruntimes

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"io/fs"
	"iter"
	"maps"
	"time"

	"connectrpc.com/connect"

	gatewayv1 "github.com/kruntimes/kruntimes/sdk/go/gen/kruntimes/gateway/v1"
	runtimev1 "github.com/kruntimes/kruntimes/sdk/go/gen/kruntimes/runtime/v1"
)

// closeTimeout bounds Session.Close and Session.Cancel, which take no context.
const closeTimeout = 30 * time.Second

// Session is a session Run: an exclusive, stateful workspace on a warm pod. Its methods call the
// gateway's SessionService (the caller needs `create` on runs/session) and, for its lifecycle,
// the Run. Every path is relative to the session's workspace and confined to it. Mutations
// (Exec, WriteFile, MakeDir, Remove, Rename, processes) run one at a time in arrival order;
// reads never wait behind them. Safe for concurrent use.
type Session struct {
	c    *Client
	name string
}

// CreateSession creates a session Run and returns it without waiting; call
// [Session.WaitReady] before using it, and end it with [Session.Close] (drain) or
// [Session.Cancel] (now) — both are safe to defer:
//
//	s, err := c.CreateSession(ctx, kruntimes.SessionSpec{Runtime: "bash"})
//	if err != nil {
//		return err
//	}
//	defer s.Close()
//	if err := s.WaitReady(ctx); err != nil {
//		return err
//	}
func (c *Client) CreateSession(ctx context.Context, spec SessionSpec) (*Session, error) {
	r, err := c.CreateRun(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &Session{c: c, name: r.Name}, nil
}

// OpenSession returns the existing session Run name. A Run of another mode is an *Error with
// CodeInvalidArgument.
func (c *Client) OpenSession(ctx context.Context, name string) (*Session, error) {
	r, err := c.GetRun(ctx, name)
	if err != nil {
		return nil, err
	}
	if r.Mode() != ModeSession {
		e := c.target("open session", name).err(CodeInvalidArgument, "run "+name+" is a "+string(r.Mode())+" Run, not a session")
		e.Mode = r.Mode()
		return nil, e
	}
	return &Session{c: c, name: name}, nil
}

// Name is the session Run's name.
func (s *Session) Name() string { return s.name }

// Namespace is the session Run's namespace.
func (s *Session) Namespace() string { return s.c.namespace }

// Run reads the session's Run.
func (s *Session) Run(ctx context.Context) (*Run, error) { return s.c.GetRun(ctx, s.name) }

// WaitReady waits until the session is Ready (an *Error with CodeRunEnded when it ended first).
func (s *Session) WaitReady(ctx context.Context) error {
	_, err := s.c.WaitReady(ctx, s.name)
	return err
}

// Wait waits until the session has ended and returns its Run (phase Succeeded after a drain,
// Cancelled after Cancel).
func (s *Session) Wait(ctx context.Context) (*Run, error) { return s.c.WaitRun(ctx, s.name) }

// Close drains the session (spec.termination.mode Drain): it refuses new operations, lets the
// accepted ones finish, stops its processes and ends Succeeded. It returns once the drain is
// requested (use [Session.Wait] for the end); closing an ended, draining or deleted session does
// nothing. It takes no context so it can be deferred; it is bounded by 30 s.
func (s *Session) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return s.end(ctx, TerminationDrain)
}

// Cancel ends the session now (spec.termination.mode Immediate): the running operation is
// killed, the queue cancelled, and the session ends Cancelled. Like Close it can be deferred and
// is bounded by 30 s.
func (s *Session) Cancel() error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return s.end(ctx, TerminationImmediate)
}

func (s *Session) end(ctx context.Context, mode TerminationMode) error {
	_, err := s.c.terminate(ctx, s.name, mode)
	if e, ok := err.(*Error); ok && e.Code == CodeNotFound {
		return nil
	}
	return err
}

// Logs returns the session's output and audit lines (see [Client.Logs]).
func (s *Session) Logs(ctx context.Context, o LogOptions) iter.Seq2[LogLine, error] {
	return s.c.Logs(ctx, s.name, o)
}

func (s *Session) targetMsg() *gatewayv1.SessionTarget {
	return &gatewayv1.SessionTarget{Namespace: s.c.namespace, Run: s.name}
}

// call prepares a gateway call: the connection and the target for errors.
func (s *Session) call(ctx context.Context, op, path string) (*gatewayConn, target, error) {
	t := target{op: op, namespace: s.c.namespace, run: s.name, path: path}
	gw, err := s.c.gateway(ctx, t)
	if err != nil {
		return nil, t, err
	}
	t.via = gw.via
	return gw, t, nil
}

// Command is what [Session.Exec] runs: an argv ([Argv]) or a shell line ([Shell]).
type Command struct {
	// Args is the argv (Args[0] is looked up on PATH).
	Args []string
	// Shell is a shell command line, run by the session's shell (instead of Args).
	Shell string
	// Env are extra environment variables.
	Env map[string]string
	// Dir is the working directory, relative to the workspace ("" = the workspace).
	Dir string
	// Timeout is the operation's timeout, queue wait included (0: the Run's
	// defaultOperationTimeout; capped by its maxOperationTimeout).
	Timeout time.Duration
	// Stdin is the command's standard input.
	Stdin []byte
}

// Argv returns a Command that runs args[0] with args[1:].
func Argv(args ...string) Command { return Command{Args: args} }

// Shell returns a Command that runs a shell command line.
func Shell(line string) Command { return Command{Shell: line} }

func (cmd Command) proto() (*runtimev1.Command, error) {
	switch {
	case cmd.Shell != "" && len(cmd.Args) > 0:
		return nil, &Error{Code: CodeInvalidArgument, Op: "exec", Message: "a Command has Args or Shell, not both"}
	case cmd.Shell != "":
		return &runtimev1.Command{Program: &runtimev1.Command_Shell{Shell: cmd.Shell}}, nil
	case len(cmd.Args) > 0:
		return &runtimev1.Command{Program: &runtimev1.Command_Argv{Argv: &runtimev1.Argv{Args: cmd.Args}}}, nil
	}
	return nil, &Error{Code: CodeInvalidArgument, Op: "exec", Message: "a Command needs Args or Shell"}
}

// ExitReason says how an exec or a process ended.
type ExitReason string

// The exit reasons.
const (
	// ExitExited: the command exited by itself (any code) or was killed by a signal it got.
	ExitExited ExitReason = "EXITED"
	// ExitTimeout: the operation's timeout passed.
	ExitTimeout ExitReason = "TIMEOUT"
	// ExitCancelled: CancelOperation, or the session was cancelled.
	ExitCancelled ExitReason = "CANCELLED"
	// ExitStartFailed: the command could not be started (e.g. not found).
	ExitStartFailed ExitReason = "START_FAILED"
)

func exitReason(r runtimev1.ExitReason) ExitReason {
	switch r {
	case runtimev1.ExitReason_EXIT_REASON_EXITED:
		return ExitExited
	case runtimev1.ExitReason_EXIT_REASON_TIMEOUT:
		return ExitTimeout
	case runtimev1.ExitReason_EXIT_REASON_CANCELLED:
		return ExitCancelled
	case runtimev1.ExitReason_EXIT_REASON_START_FAILED:
		return ExitStartFailed
	}
	return ""
}

// ExecExit is how an exec ended. A non-zero exit is not an error of the call.
type ExecExit struct {
	// OperationID identifies the operation (for CancelOperation and LogOptions.Call).
	OperationID string
	// Reason says how it ended.
	Reason ExitReason
	// ExitCode is the exit code (meaningful with ExitExited and no Signal).
	ExitCode int
	// Signal is the signal that killed it, if one did (e.g. "SIGKILL").
	Signal string
	// Message explains a START_FAILED or TIMEOUT.
	Message string
}

// Success reports whether the command exited 0.
func (e *ExecExit) Success() bool { return e.Reason == ExitExited && e.ExitCode == 0 && e.Signal == "" }

// ExecResult is a finished exec with its whole output.
type ExecResult struct {
	ExecExit
	// Stdout and Stderr are everything the command wrote.
	Stdout, Stderr []byte
}

// ExecEvent is one event of a streamed exec: Started, then Output chunks, then Exited (exactly
// one field besides OperationID is set).
type ExecEvent struct {
	// OperationID identifies the operation (in every event).
	OperationID string
	// Started is set once the command started; PID is its process ID in the session.
	Started *ExecStarted
	// Output is a chunk of output, as produced.
	Output *ExecOutput
	// Exited is the last event.
	Exited *ExecExit
}

// ExecStarted is the start of an exec.
type ExecStarted struct {
	// PID is the command's process ID in the session.
	PID int
}

// ExecOutput is a chunk of an exec's output.
type ExecOutput struct {
	// Stream is stdout or stderr.
	Stream Stream
	// Data is the chunk as written (not split into lines).
	Data []byte
}

// ExecStream runs cmd and yields its events as they arrive: started, output chunks, exited. The
// sequence ends after Exited, or with an error (the gateway's refusal, ctx ending, a lost
// connection). Breaking out of the loop, like ctx ending, ends the call, and the session then
// cancels the command.
func (s *Session) ExecStream(ctx context.Context, cmd Command) iter.Seq2[ExecEvent, error] {
	return func(yield func(ExecEvent, error) bool) {
		gw, t, err := s.call(ctx, "exec", "")
		if err != nil {
			yield(ExecEvent{}, err)
			return
		}
		pc, err := cmd.proto()
		if err != nil {
			yield(ExecEvent{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		stream, err := gw.sessions.Exec(ctx, connect.NewRequest(&gatewayv1.ExecRequest{
			Target:     s.targetMsg(),
			Command:    pc,
			Env:        maps.Clone(cmd.Env),
			WorkingDir: cmd.Dir,
			TimeoutMs:  durationMillis(cmd.Timeout),
			Stdin:      cmd.Stdin,
		}))
		if err != nil {
			cancel()
			yield(ExecEvent{}, gatewayError(err, t))
			return
		}
		// Cancel first: Close would otherwise read the rest of a stream the caller left.
		defer func() {
			cancel()
			_ = stream.Close()
		}()
		exited := false
		for stream.Receive() {
			m := stream.Msg()
			ev := ExecEvent{OperationID: m.GetOperationId()}
			switch {
			case m.GetStarted() != nil:
				ev.Started = &ExecStarted{PID: int(m.GetStarted().GetPid())}
			case m.GetOutput() != nil:
				ev.Output = &ExecOutput{Stream: Stream(m.GetOutput().GetStream()), Data: m.GetOutput().GetData()}
			case m.GetExited() != nil:
				x := m.GetExited()
				ev.Exited = &ExecExit{OperationID: ev.OperationID, Reason: exitReason(x.GetReason()), ExitCode: int(x.GetExitCode()), Signal: x.GetSignal(), Message: x.GetMessage()}
				exited = true
			default:
				continue
			}
			if !yield(ev, nil) || exited {
				return
			}
		}
		if err := stream.Err(); err != nil {
			yield(ExecEvent{}, gatewayError(err, t))
			return
		}
		yield(ExecEvent{}, t.err(CodeUnavailable, "the exec stream ended before the command's exit was reported"))
	}
}

// ExecTo runs cmd, copying its output to stdout and stderr (either may be nil) as it arrives,
// and returns how it exited.
func (s *Session) ExecTo(ctx context.Context, cmd Command, stdout, stderr io.Writer) (*ExecExit, error) {
	for ev, err := range s.ExecStream(ctx, cmd) {
		if err != nil {
			return nil, err
		}
		if ev.Output != nil {
			w := stdout
			if ev.Output.Stream == Stderr {
				w = stderr
			}
			if w != nil {
				if _, err := w.Write(ev.Output.Data); err != nil {
					return nil, &Error{Code: CodeInternal, Op: "exec", Namespace: s.c.namespace, Run: s.name, Message: "writing the output: " + err.Error(), Err: err}
				}
			}
		}
		if ev.Exited != nil {
			return ev.Exited, nil
		}
	}
	return nil, &Error{Code: CodeUnavailable, Op: "exec", Namespace: s.c.namespace, Run: s.name, Message: "the exec stream ended without an exit"}
}

// Exec runs cmd to completion and returns its exit and whole output. A command that exits
// non-zero is not an error: check [ExecExit.Success].
func (s *Session) Exec(ctx context.Context, cmd Command) (*ExecResult, error) {
	var stdout, stderr bytes.Buffer
	exit, err := s.ExecTo(ctx, cmd, &stdout, &stderr)
	if err != nil {
		return nil, err
	}
	return &ExecResult{ExecExit: *exit, Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}, nil
}

// CancelOperation stops a queued or running exec by its OperationID; it reports whether there
// was one to stop.
func (s *Session) CancelOperation(ctx context.Context, operationID string) (bool, error) {
	gw, t, err := s.call(ctx, "cancel operation", "")
	if err != nil {
		return false, err
	}
	res, err := gw.sessions.CancelOperation(ctx, connect.NewRequest(&gatewayv1.CancelOperationRequest{Target: s.targetMsg(), OperationId: operationID}))
	if err != nil {
		return false, gatewayError(err, t)
	}
	return res.Msg.GetCancelled(), nil
}

// FileType is the type of a path.
type FileType string

// The file types.
const (
	TypeFile      FileType = "file"
	TypeDirectory FileType = "directory"
	TypeSymlink   FileType = "symlink"
	TypeOther     FileType = "other"
)

// FileInfo describes a path in the workspace.
type FileInfo struct {
	// Path is relative to the workspace ("" for the workspace itself).
	Path string
	// Name is the last path component.
	Name string
	// Type is file, directory, symlink or other.
	Type FileType
	// Size in bytes.
	Size int64
	// Mode holds the permission bits (e.g. 0o644).
	Mode fs.FileMode
	// ModTime is the last modification.
	ModTime time.Time
	// LinkTarget is a symlink's target as stored.
	LinkTarget string
}

// IsDir reports whether the path is a directory.
func (fi FileInfo) IsDir() bool { return fi.Type == TypeDirectory }

func fileInfo(m *runtimev1.FileInfo) *FileInfo {
	if m == nil {
		return nil
	}
	t := TypeOther
	switch m.GetType() {
	case runtimev1.FileType_FILE_TYPE_FILE:
		t = TypeFile
	case runtimev1.FileType_FILE_TYPE_DIRECTORY:
		t = TypeDirectory
	case runtimev1.FileType_FILE_TYPE_SYMLINK:
		t = TypeSymlink
	}
	fi := &FileInfo{
		Path: m.GetPath(), Name: m.GetName(), Type: t, Size: int64(m.GetSize()),
		Mode: fs.FileMode(m.GetMode()) & fs.ModePerm, LinkTarget: m.GetLinkTarget(),
	}
	if us := m.GetModifiedMicros(); us != 0 {
		fi.ModTime = time.UnixMicro(us)
	}
	return fi
}

// FileReader streams a file from the session; it is an io.ReadCloser. Close it when done.
type FileReader struct {
	info   *FileInfo
	stream *connect.ServerStreamForClient[gatewayv1.ReadFileResponse]
	cancel context.CancelFunc
	buf    []byte
	err    error
	t      target
}

// Info describes the file being read.
func (r *FileReader) Info() FileInfo {
	if r.info == nil {
		return FileInfo{}
	}
	return *r.info
}

// Read implements io.Reader.
func (r *FileReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if !r.stream.Receive() {
			if err := r.stream.Err(); err != nil {
				r.err = gatewayError(err, r.t)
			} else {
				r.err = io.EOF
			}
			continue
		}
		r.buf = r.stream.Msg().GetData()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// Close ends the stream.
func (r *FileReader) Close() error {
	r.cancel()
	return r.stream.Close()
}

// Open starts streaming the file at path; the first chunk is read now, so a missing path is an
// *Error with CodeNotFound here.
func (s *Session) Open(ctx context.Context, path string) (*FileReader, error) {
	return s.OpenRange(ctx, path, 0, 0)
}

// OpenRange is [Session.Open] from offset, for length bytes (0: to the end).
func (s *Session) OpenRange(ctx context.Context, path string, offset, length int64) (*FileReader, error) {
	gw, t, err := s.call(ctx, "read file", path)
	if err != nil {
		return nil, err
	}
	if offset < 0 || length < 0 {
		return nil, t.err(CodeInvalidArgument, "offset and length must not be negative")
	}
	ctx, cancel := context.WithCancel(ctx)
	stream, err := gw.sessions.ReadFile(ctx, connect.NewRequest(&gatewayv1.ReadFileRequest{
		Target: s.targetMsg(), Path: path, Offset: uint64(offset), Length: uint64(length),
	}))
	if err != nil {
		cancel()
		return nil, gatewayError(err, t)
	}
	r := &FileReader{stream: stream, cancel: cancel, t: t}
	if !stream.Receive() {
		err := stream.Err()
		_ = stream.Close()
		cancel()
		if err == nil {
			return nil, t.err(CodeUnavailable, "the read stream ended before the file's info arrived")
		}
		return nil, gatewayError(err, t)
	}
	r.info = fileInfo(stream.Msg().GetInfo())
	r.buf = stream.Msg().GetData()
	return r, nil
}

// ReadFile returns the whole file at path.
func (s *Session) ReadFile(ctx context.Context, path string) ([]byte, error) {
	r, err := s.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// WriteMode says what a write does to an existing file.
type WriteMode int

// The write modes.
const (
	// WriteTruncate replaces the file's content (the default).
	WriteTruncate WriteMode = iota
	// WriteCreate fails with CodeAlreadyExists when the path exists.
	WriteCreate
	// WriteAppend appends to the file (created if missing).
	WriteAppend
)

// WriteOption configures [Session.WriteFile] and [Session.Upload].
type WriteOption func(*writeConfig)

type writeConfig struct {
	mode     WriteMode
	parents  bool
	fileMode fs.FileMode
	chunk    int
}

// WithWriteMode sets what the write does to an existing file.
func WithWriteMode(m WriteMode) WriteOption { return func(c *writeConfig) { c.mode = m } }

// WithParents creates missing parent directories.
func WithParents() WriteOption { return func(c *writeConfig) { c.parents = true } }

// WithFileMode sets the permission bits of a new file (default 0o644).
func WithFileMode(m fs.FileMode) WriteOption { return func(c *writeConfig) { c.fileMode = m } }

// WithChunkSize sets the bytes per WriteFile call (default 1 MiB; at most the gateway's
// max-request-bytes, 16 MiB by default).
func WithChunkSize(n int) WriteOption { return func(c *writeConfig) { c.chunk = n } }

// UploadChunkSize is the default size of one upload chunk.
const UploadChunkSize = 1 << 20

// WriteFile writes data to path atomically (readers see the old or the whole new file) and
// returns the committed file's info.
func (s *Session) WriteFile(ctx context.Context, path string, data []byte, opts ...WriteOption) (*FileInfo, error) {
	return s.Upload(ctx, path, bytes.NewReader(data), opts...)
}

// Upload streams r to path in chunks of one upload (the last commits the file atomically) and
// returns the committed file's info. Nothing is written if r fails.
func (s *Session) Upload(ctx context.Context, path string, r io.Reader, opts ...WriteOption) (*FileInfo, error) {
	gw, t, err := s.call(ctx, "write file", path)
	if err != nil {
		return nil, err
	}
	cfg := writeConfig{chunk: UploadChunkSize}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.chunk <= 0 {
		cfg.chunk = UploadChunkSize
	}
	mode := runtimev1.WriteMode_WRITE_MODE_TRUNCATE
	switch cfg.mode {
	case WriteCreate:
		mode = runtimev1.WriteMode_WRITE_MODE_CREATE
	case WriteAppend:
		mode = runtimev1.WriteMode_WRITE_MODE_APPEND
	}
	uploadID := newUploadID()
	var offset uint64
	// One chunk ahead: a full chunk is sent once more data follows, so the last call commits.
	cur := make([]byte, cfg.chunk)
	next := make([]byte, cfg.chunk)
	n, rerr := io.ReadFull(r, cur)
	for {
		last := rerr != nil
		var m int
		if !last {
			m, rerr = io.ReadFull(r, next)
			last = m == 0 && rerr != nil
		}
		if rerr != nil && rerr != io.EOF && rerr != io.ErrUnexpectedEOF {
			return nil, &Error{Code: CodeInvalidArgument, Op: t.op, Namespace: t.namespace, Run: t.run, Path: path, Message: "reading the data to upload: " + rerr.Error(), Err: rerr}
		}
		res, err := gw.sessions.WriteFile(ctx, connect.NewRequest(&gatewayv1.WriteFileRequest{
			Target: s.targetMsg(), Path: path, UploadId: uploadID, Offset: offset, Data: cur[:n],
			Mode: mode, FileMode: uint32(cfg.fileMode.Perm()), Last: last, Parents: cfg.parents,
		}))
		if err != nil {
			return nil, gatewayError(err, t)
		}
		offset += uint64(n)
		if last {
			return fileInfo(res.Msg.GetInfo()), nil
		}
		cur, next, n = next, cur, m
	}
}

func newUploadID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "go-" + hex.EncodeToString(b)
}

// Stat describes the path (without following a final symlink).
func (s *Session) Stat(ctx context.Context, path string) (*FileInfo, error) {
	gw, t, err := s.call(ctx, "stat", path)
	if err != nil {
		return nil, err
	}
	res, err := gw.sessions.Stat(ctx, connect.NewRequest(&gatewayv1.StatRequest{Target: s.targetMsg(), Path: path}))
	if err != nil {
		return nil, gatewayError(err, t)
	}
	return fileInfo(res.Msg.GetInfo()), nil
}

// ListOption configures [Session.ListFiles].
type ListOption func(*listConfig)

type listConfig struct{ pageSize int }

// WithPageSize sets how many entries each ListFiles call returns (default 100, at most 1000).
func WithPageSize(n int) ListOption { return func(c *listConfig) { c.pageSize = n } }

// ListFiles yields the entries of the directory at path ("" = the workspace), ordered by the
// UTF-8 bytes of their names, fetching page after page as the loop goes on. Paging is stable
// while the directory changes: an entry added or removed between pages is seen or not by its
// name, and no other is repeated or skipped. The sequence ends after the first error.
//
//	for fi, err := range s.ListFiles(ctx, "") {
//		if err != nil {
//			return err
//		}
//		fmt.Println(fi.Name, fi.Size)
//	}
func (s *Session) ListFiles(ctx context.Context, path string, opts ...ListOption) iter.Seq2[FileInfo, error] {
	return func(yield func(FileInfo, error) bool) {
		var cfg listConfig
		for _, o := range opts {
			o(&cfg)
		}
		gw, t, err := s.call(ctx, "list files", path)
		if err != nil {
			yield(FileInfo{}, err)
			return
		}
		token := ""
		for {
			res, err := gw.sessions.ListFiles(ctx, connect.NewRequest(&gatewayv1.ListFilesRequest{
				Target: s.targetMsg(), Path: path, Limit: uint32(max(cfg.pageSize, 0)), PageToken: token,
			}))
			if err != nil {
				yield(FileInfo{}, gatewayError(err, t))
				return
			}
			for _, e := range res.Msg.GetEntries() {
				if !yield(*fileInfo(e), nil) {
					return
				}
			}
			if token = res.Msg.GetNextPageToken(); token == "" {
				return
			}
		}
	}
}

// MakeDir creates the directory at path (with its missing parents when parents is true).
func (s *Session) MakeDir(ctx context.Context, path string, parents bool) (*FileInfo, error) {
	gw, t, err := s.call(ctx, "make dir", path)
	if err != nil {
		return nil, err
	}
	res, err := gw.sessions.MakeDir(ctx, connect.NewRequest(&gatewayv1.MakeDirRequest{Target: s.targetMsg(), Path: path, Parents: parents}))
	if err != nil {
		return nil, gatewayError(err, t)
	}
	return fileInfo(res.Msg.GetInfo()), nil
}

// Remove deletes a file, a symlink or an empty directory; it reports whether something was
// removed.
func (s *Session) Remove(ctx context.Context, path string) (bool, error) {
	return s.remove(ctx, path, false)
}

// RemoveAll deletes path and everything under it; it reports whether something was removed.
func (s *Session) RemoveAll(ctx context.Context, path string) (bool, error) {
	return s.remove(ctx, path, true)
}

func (s *Session) remove(ctx context.Context, path string, recursive bool) (bool, error) {
	gw, t, err := s.call(ctx, "remove", path)
	if err != nil {
		return false, err
	}
	res, err := gw.sessions.Remove(ctx, connect.NewRequest(&gatewayv1.RemoveRequest{Target: s.targetMsg(), Path: path, Recursive: recursive}))
	if err != nil {
		return false, gatewayError(err, t)
	}
	return res.Msg.GetRemoved(), nil
}

// Rename moves from to to (replacing an existing to only when overwrite is true).
func (s *Session) Rename(ctx context.Context, from, to string, overwrite bool) (*FileInfo, error) {
	gw, t, err := s.call(ctx, "rename", from)
	if err != nil {
		return nil, err
	}
	res, err := gw.sessions.Rename(ctx, connect.NewRequest(&gatewayv1.RenameRequest{Target: s.targetMsg(), From: from, To: to, Overwrite: overwrite}))
	if err != nil {
		return nil, gatewayError(err, t)
	}
	return fileInfo(res.Msg.GetInfo()), nil
}

// Process is a background process of the session.
type Process struct {
	// ID names the process in the session.
	ID string
	// PID is its process ID.
	PID int
	// Running is true until it exits.
	Running bool
	// Reason says how it ended.
	Reason ExitReason
	// ExitCode is its exit code, once it exited.
	ExitCode int
	// Signal is the signal that killed it, if one did.
	Signal string
	// StdoutTail and StderrTail are the ends of its output.
	StdoutTail, StderrTail []byte
}

func process(m *runtimev1.ProcessInfo) *Process {
	if m == nil {
		return nil
	}
	return &Process{
		ID: m.GetProcessId(), PID: int(m.GetPid()), Running: m.GetRunning(), Reason: exitReason(m.GetReason()),
		ExitCode: int(m.GetExitCode()), Signal: m.GetSignal(), StdoutTail: m.GetStdoutTail(), StderrTail: m.GetStderrTail(),
	}
}

// StartProcess starts cmd in the background as process id ("" = a generated ID; Timeout and
// Stdin do not apply). Processes are killed when the session ends.
func (s *Session) StartProcess(ctx context.Context, id string, cmd Command) (*Process, error) {
	gw, t, err := s.call(ctx, "start process", "")
	if err != nil {
		return nil, err
	}
	pc, err := cmd.proto()
	if err != nil {
		return nil, err
	}
	res, err := gw.sessions.StartProcess(ctx, connect.NewRequest(&gatewayv1.StartProcessRequest{
		Target: s.targetMsg(), ProcessId: id, Command: pc, Env: maps.Clone(cmd.Env), WorkingDir: cmd.Dir,
	}))
	if err != nil {
		return nil, gatewayError(err, t)
	}
	return process(res.Msg.GetProcess()), nil
}

// SignalProcess sends signal (e.g. "SIGTERM") to the process's group.
func (s *Session) SignalProcess(ctx context.Context, id, signal string) (*Process, error) {
	gw, t, err := s.call(ctx, "signal process", "")
	if err != nil {
		return nil, err
	}
	res, err := gw.sessions.SignalProcess(ctx, connect.NewRequest(&gatewayv1.SignalProcessRequest{Target: s.targetMsg(), ProcessId: id, Signal: signal}))
	if err != nil {
		return nil, gatewayError(err, t)
	}
	return process(res.Msg.GetProcess()), nil
}

// WaitProcess waits up to timeout for the process to exit and returns it (Running is still
// true when it did not).
func (s *Session) WaitProcess(ctx context.Context, id string, timeout time.Duration) (*Process, error) {
	gw, t, err := s.call(ctx, "wait process", "")
	if err != nil {
		return nil, err
	}
	res, err := gw.sessions.WaitProcess(ctx, connect.NewRequest(&gatewayv1.WaitProcessRequest{Target: s.targetMsg(), ProcessId: id, TimeoutMs: durationMillis(timeout)}))
	if err != nil {
		return nil, gatewayError(err, t)
	}
	return process(res.Msg.GetProcess()), nil
}

// ListProcesses lists the session's background processes, running and exited.
func (s *Session) ListProcesses(ctx context.Context) ([]Process, error) {
	gw, t, err := s.call(ctx, "list processes", "")
	if err != nil {
		return nil, err
	}
	res, err := gw.sessions.ListProcesses(ctx, connect.NewRequest(&gatewayv1.ListProcessesRequest{Target: s.targetMsg()}))
	if err != nil {
		return nil, gatewayError(err, t)
	}
	out := make([]Process, 0, len(res.Msg.GetProcesses()))
	for _, p := range res.Msg.GetProcesses() {
		out = append(out, *process(p))
	}
	return out, nil
}

func durationMillis(d time.Duration) uint32 {
	if d <= 0 {
		return 0
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > 1<<32-1 {
		return 1<<32 - 1
	}
	return uint32(ms)
}
