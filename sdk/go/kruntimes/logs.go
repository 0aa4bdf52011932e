package kruntimes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Stream names an output stream.
type Stream string

// The streams.
const (
	Stdout Stream = "stdout"
	Stderr Stream = "stderr"
)

// runtimedContainer is the sidecar on every Runtime pod whose log holds the Runs' output records.
const runtimedContainer = "runtimed"

// LogLine is one line a Run printed (without its newline).
type LogLine struct {
	// Attempt is the attempt that printed it (1, 2, …).
	Attempt int
	// Stream is stdout or stderr. A session's audit records are stderr lines
	// "audit: <operation> by <caller>: <result> (<ms> ms) {args}".
	Stream Stream
	// Text is the line.
	Text string
	// Call is the function invocation or session operation that printed it; empty for tasks.
	Call string
	// FromStatus is true for lines read from status.stdoutTail/stderrTail because runtimed's
	// log no longer had them (the pod is gone or its log was rotated): stdout's lines first.
	FromStatus bool
}

// LogOptions selects what [Client.Logs] returns.
type LogOptions struct {
	// Follow returns what was already written, then the output live until the Run ends
	// (moving to the next attempt's pod on a retry).
	Follow bool
	// Attempt returns only this attempt's lines (0: every attempt that can still be found).
	Attempt int
	// Call returns only the lines of this function invocation or session operation (the
	// InvocationID of [Response], or the OperationID of an exec).
	Call string
}

// Logs returns a Run's output lines, as `krt logs` prints them: runtimed's output records on the
// Run's pod (and, for earlier attempts, on the other pods of its Runtime that still exist),
// through the Kubernetes API (`get` on pods/log, `list` on pods). When the latest attempt's
// records are gone but the Run ended, the status tails stand in (FromStatus). The sequence ends
// after the first error; break out of the loop to stop early.
//
//	for line, err := range c.Logs(ctx, "hello", kruntimes.LogOptions{Follow: true}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(line.Text)
//	}
func (c *Client) Logs(ctx context.Context, name string, o LogOptions) iter.Seq2[LogLine, error] {
	return func(yield func(LogLine, error) bool) {
		var err error
		if o.Follow {
			err = c.followLogs(ctx, name, o, func(l LogLine) bool { return yield(l, nil) })
		} else {
			var run *Run
			if run, err = c.GetRun(ctx, name); err == nil {
				_, err = c.readLogs(ctx, run, readOptions{attempt: o.Attempt, call: o.Call, tailFallback: true}, func(l LogLine) bool { return yield(l, nil) })
			}
		}
		if err != nil && !errors.Is(err, errStopped) {
			yield(LogLine{}, err)
		}
	}
}

// errStopped ends a read when the consumer stopped the iteration.
var errStopped = errors.New("stopped")

// outputLine is runtimed's output record in one log line.
type outputLine struct {
	runUID  string
	attempt int
	stream  Stream
	line    string
	call    string
}

// auditKeys are the audit record's fields that are not the operation's own arguments.
var auditKeys = map[string]bool{
	"level": true, "time": true, "msg": true, "component": true, "pod": true, "host": true, "run": true,
	"runUID": true, "namespace": true, "attempt": true, "audit": true, "caller": true, "op": true,
	"result": true, "durationMs": true, "operation": true,
}

// parseOutputLine reads runtimed's output record (msg "output": runUID, attempt, stream, line,
// and invocation or operation) or a session's audit record (msg "session operation", audit
// true) from one log line; anything else is not output.
func parseOutputLine(text string) (outputLine, bool) {
	if !strings.HasPrefix(text, "{") || !(strings.Contains(text, `"output"`) || strings.Contains(text, `"audit"`)) {
		return outputLine{}, false
	}
	keys, raw, ok := orderedObject(text)
	if !ok {
		return outputLine{}, false
	}
	str := func(k string) (string, bool) {
		var s string
		r, ok := raw[k]
		if !ok || json.Unmarshal(r, &s) != nil {
			return "", false
		}
		return s, true
	}
	attempt := func() (int, bool) {
		var f float64
		r, ok := raw["attempt"]
		if !ok || json.Unmarshal(r, &f) != nil || f != float64(int(f)) {
			return 0, false
		}
		return int(f), true
	}
	msg, _ := str("msg")
	call := func(o *outputLine) {
		for _, k := range []string{"invocation", "operation"} {
			if v, ok := str(k); ok && v != "" {
				o.call = v
			}
		}
	}
	if msg == "session operation" && string(raw["audit"]) == "true" {
		uid, ok1 := str("runUID")
		op, ok2 := str("op")
		a, ok3 := attempt()
		if !ok1 || !ok2 || !ok3 {
			return outputLine{}, false
		}
		caller, _ := str("caller")
		if caller == "" {
			caller = "(unknown)"
		}
		result, ok := str("result")
		if !ok {
			result = string(raw["result"])
			if result == "" {
				result = "undefined"
			}
		}
		took := ""
		var ms float64
		if r, ok := raw["durationMs"]; ok && json.Unmarshal(r, &ms) == nil {
			took = " (" + strconv.FormatFloat(ms, 'f', -1, 64) + " ms)"
		}
		var args bytes.Buffer
		for _, k := range keys {
			if auditKeys[k] {
				continue
			}
			if args.Len() == 0 {
				args.WriteByte('{')
			} else {
				args.WriteByte(',')
			}
			kj, _ := json.Marshal(k)
			args.Write(kj)
			args.WriteByte(':')
			_ = json.Compact(&args, raw[k])
		}
		rest := ""
		if args.Len() > 0 {
			args.WriteByte('}')
			rest = " " + args.String()
		}
		o := outputLine{runUID: uid, attempt: a, stream: Stderr,
			line: fmt.Sprintf("audit: %s by %s: %s%s%s", op, caller, result, took, rest)}
		if v, ok := str("operation"); ok {
			o.call = v
		}
		return o, true
	}
	if msg != "output" {
		return outputLine{}, false
	}
	uid, ok1 := str("runUID")
	line, ok2 := str("line")
	stream, _ := str("stream")
	a, ok3 := attempt()
	if !ok1 || !ok2 || !ok3 || (stream != "stdout" && stream != "stderr") {
		return outputLine{}, false
	}
	o := outputLine{runUID: uid, attempt: a, stream: Stream(stream), line: line}
	call(&o)
	return o, true
}

// orderedObject decodes a JSON object's members, keeping their order (audit arguments are
// shown as logged).
func orderedObject(text string) ([]string, map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	var keys []string
	raw := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		k, ok := tok.(string)
		if !ok {
			return nil, nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		if _, dup := raw[k]; !dup {
			keys = append(keys, k)
		}
		raw[k] = v
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, nil, false
	}
	return keys, raw, true
}

// sinceCreation is one second before the Run was created (creationTimestamp has one-second
// precision): where its output can start in a pod's log.
func sinceCreation(created metav1.Time) string {
	if created.IsZero() {
		return ""
	}
	return created.Add(-time.Second).UTC().Format(time.RFC3339)
}

// tailLines splits a status tail into lines, dropping only the final empty one.
func tailLines(tail string) []string {
	if tail == "" {
		return nil
	}
	lines := strings.Split(tail, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// podOutput streams the output records of the Run with runUID from the runtimed log of one pod.
func (c *Client) podOutput(ctx context.Context, namespace, pod string, follow bool, since string, each func(outputLine) bool) error {
	req := c.core.Get().Namespace(namespace).Resource("pods").Name(pod).SubResource("log").Param("container", runtimedContainer)
	if follow {
		req = req.Param("follow", "true")
	}
	if since != "" {
		req = req.Param("sinceTime", since)
	}
	body, err := req.Stream(ctx)
	if err != nil {
		return err
	}
	defer body.Close()
	r := bufio.NewReaderSize(body, 64*1024)
	for {
		text, err := r.ReadString('\n')
		if text != "" {
			if o, ok := parseOutputLine(strings.TrimRight(text, "\r\n")); ok {
				if !each(o) {
					return errStopped
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// podGone is a 404 or 400 from the log endpoint: the pod, or its runtimed container, is gone.
func podGone(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsBadRequest(err)
}

type readOptions struct {
	attempt, before int
	call            string
	tailFallback    bool
}

// readLogs yields what the Run's pods already logged, attempt by attempt; returns the attempts
// seen.
func (c *Client) readLogs(ctx context.Context, run *Run, o readOptions, yield func(LogLine) bool) ([]int, error) {
	t := c.target("logs", run.Name)
	s := run.Status
	latest := int(s.Attempt)
	if s.Assignment != nil {
		latest = max(latest, int(s.Assignment.Attempt))
	}
	if o.attempt != 0 && (o.attempt < 1 || o.attempt > latest) {
		msg := fmt.Sprintf("run %q has no attempt %d", run.Name, o.attempt)
		if latest > 0 {
			msg += fmt.Sprintf(" (its attempts are 1–%d)", latest)
		} else {
			msg += " (it has not started)"
		}
		return nil, t.err(CodeInvalidArgument, msg)
	}
	if latest == 0 {
		return nil, nil
	}
	wants := func(a int) bool {
		return (o.attempt == 0 || a == o.attempt) && (o.before == 0 || a < o.before)
	}
	var pods []string
	current := 0
	if s.Assignment != nil {
		pods = append(pods, s.Assignment.Pod)
		current = int(s.Assignment.Attempt)
	}
	needOthers := false
	for a := 1; a <= latest; a++ {
		if wants(a) && a != current {
			needOthers = true
		}
	}
	if needOthers {
		// Earlier attempts may have run on other pods; the status names only the current one.
		list, err := c.dyn.Resource(podsGVR).Namespace(c.namespace).List(ctx, metav1.ListOptions{LabelSelector: RuntimeLabel + "=" + run.Spec.Runtime})
		if err == nil {
			for _, p := range list.Items {
				if !slices.Contains(pods, p.GetName()) {
					pods = append(pods, p.GetName())
				}
			}
		} else if !apierrors.IsForbidden(err) {
			return nil, kubeError(err, t, "list", "pods")
		}
	}
	byAttempt := map[int][]LogLine{}
	var gone []string
	since := sinceCreation(run.CreationTimestamp)
	for _, pod := range pods {
		err := c.podOutput(ctx, c.namespace, pod, false, since, func(l outputLine) bool {
			if l.runUID != string(run.UID) || !wants(l.attempt) || (o.call != "" && l.call != o.call) {
				return true
			}
			byAttempt[l.attempt] = append(byAttempt[l.attempt], LogLine{Attempt: l.attempt, Stream: l.stream, Text: l.line, Call: l.call})
			return true
		})
		if err != nil {
			if podGone(err) {
				gone = append(gone, pod)
				continue
			}
			return nil, kubeError(err, t, "get", "pods/log")
		}
	}
	attempts := slices.Sorted(func(yield func(int) bool) {
		for a := range byAttempt {
			if !yield(a) {
				return
			}
		}
	})
	for _, a := range attempts {
		for _, l := range byAttempt[a] {
			if !yield(l) {
				return attempts, errStopped
			}
		}
	}
	if wants(latest) && len(byAttempt[latest]) == 0 && o.tailFallback && run.Terminal() && o.call == "" {
		if !yieldTails(run, latest, yield) {
			return attempts, errStopped
		}
	}
	return attempts, nil
}

// yieldTails yields status.stdoutTail then status.stderrTail as lines.
func yieldTails(run *Run, attempt int, yield func(LogLine) bool) bool {
	for _, l := range tailLines(run.Status.StdoutTail) {
		if !yield(LogLine{Attempt: attempt, Stream: Stdout, Text: l, FromStatus: true}) {
			return false
		}
	}
	for _, l := range tailLines(run.Status.StderrTail) {
		if !yield(LogLine{Attempt: attempt, Stream: Stderr, Text: l, FromStatus: true}) {
			return false
		}
	}
	return true
}

// How a follower stops after the Run ended: when its last lines match the status tails, or
// (without tails) after the log was quiet for quietFor; never later than drainMax.
const (
	quietFor      = 300 * time.Millisecond
	drainMax      = 3 * time.Second
	switchGrace   = time.Second
	followerQueue = 256
)

// follower streams one attempt's output live from its pod.
type follower struct {
	pod     string
	attempt int
	cancel  context.CancelFunc
	done    chan struct{}
	lines   atomic.Int64
	gone    bool
	err     error
}

func (c *Client) startFollower(ctx context.Context, run *Run, a Assignment, call string, out chan<- LogLine) *follower {
	fctx, cancel := context.WithCancel(ctx)
	f := &follower{pod: a.Pod, attempt: int(a.Attempt), cancel: cancel, done: make(chan struct{})}
	uid := string(run.UID)
	since := sinceCreation(run.CreationTimestamp)
	go func() {
		defer close(f.done)
		err := c.podOutput(fctx, c.namespace, f.pod, true, since, func(l outputLine) bool {
			if l.runUID != uid || l.attempt != f.attempt || (call != "" && l.call != call) {
				return true
			}
			select {
			case out <- LogLine{Attempt: l.attempt, Stream: l.stream, Text: l.line, Call: l.call}:
				f.lines.Add(1)
				return true
			case <-fctx.Done():
				return false
			}
		})
		switch {
		case err == nil, fctx.Err() != nil, errors.Is(err, errStopped):
		case podGone(err):
			f.gone = true
		default:
			f.err = kubeError(err, c.target("logs", run.Name), "get", "pods/log")
		}
	}()
	return f
}

// followLogs prints what the Run already wrote, then its output live until it ends (switching
// pods when a retry places the next attempt elsewhere). Driven by a watch on the Run.
func (c *Client) followLogs(ctx context.Context, name string, o LogOptions, yield func(LogLine) bool) error {
	first, err := c.GetRun(ctx, name)
	if err != nil {
		return err
	}
	current := 0
	if first.Status.Assignment != nil {
		current = int(first.Status.Assignment.Attempt)
	}
	if first.Terminal() || (o.Attempt != 0 && o.Attempt < current) {
		_, err := c.readLogs(ctx, first, readOptions{attempt: o.Attempt, call: o.Call, tailFallback: true}, yield)
		return err
	}
	if o.Attempt == 0 && current > 1 {
		if _, err := c.readLogs(ctx, first, readOptions{before: current, call: o.Call}, yield); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lines := make(chan LogLine, followerQueue)
	var f *follower
	onUpdate := func(r *Run) {
		a := r.Status.Assignment
		if a == nil || (o.Attempt != 0 && int(a.Attempt) != o.Attempt) {
			return
		}
		if f != nil && f.pod == a.Pod && f.attempt == int(a.Attempt) {
			return
		}
		if prev := f; prev != nil {
			time.AfterFunc(switchGrace, prev.cancel)
		}
		f = c.startFollower(ctx, r, *a, o.Call, lines)
	}
	type result struct {
		run *Run
		err error
	}
	finished := make(chan result, 1)
	go func() {
		r, err := c.waitRun(ctx, name, onUpdate)
		finished <- result{r, err}
	}()
	last := map[Stream]string{}
	lastAt := time.Now()
	emit := func(l LogLine) bool {
		last[l.Stream], lastAt = l.Text, time.Now()
		return yield(l)
	}
	var final *Run
	for final == nil {
		select {
		case l := <-lines:
			if !emit(l) {
				return errStopped
			}
		case res := <-finished:
			if res.err != nil {
				return res.err
			}
			final = res.run
		}
	}
	if f == nil {
		_, err := c.readLogs(ctx, final, readOptions{attempt: o.Attempt, call: o.Call, tailFallback: true}, yield)
		return err
	}
	// Drain: wait until the output printed ends as the terminal status's tails do (bounded).
	s := final.Status
	hasTails := s.StdoutTail != "" || s.StderrTail != ""
	lastOf := func(tail string) string {
		ls := tailLines(tail)
		if len(ls) == 0 {
			return ""
		}
		return ls[len(ls)-1]
	}
	caughtUp := func() bool {
		return lastOf(s.StdoutTail) == last[Stdout] && lastOf(s.StderrTail) == last[Stderr]
	}
	deadline := time.NewTimer(drainMax)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
drain:
	for {
		if hasTails && o.Call == "" && caughtUp() {
			break
		}
		select {
		case l := <-lines:
			if !emit(l) {
				return errStopped
			}
		case <-f.done:
			break drain
		case <-deadline.C:
			break drain
		case <-tick.C:
			if (!hasTails || o.Call != "") && time.Since(lastAt) >= quietFor {
				break drain
			}
		}
	}
	f.cancel()
	<-f.done
	// Lines the follower had already queued are output too.
	for {
		select {
		case l := <-lines:
			if !emit(l) {
				return errStopped
			}
			continue
		default:
		}
		break
	}
	if f.err != nil {
		return f.err
	}
	finalAttempt := int(s.Attempt)
	if finalAttempt == 0 {
		finalAttempt = f.attempt
	}
	if f.lines.Load() == 0 && f.attempt == finalAttempt && o.Call == "" {
		if !yieldTails(final, f.attempt, yield) {
			return errStopped
		}
	}
	return nil
}
