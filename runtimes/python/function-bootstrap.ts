/**
 * The python function worker, run as `python3 -c FUNCTION_BOOTSTRAP <socket> <source> <handler>
 * <max_response_bytes>` in the Run's working directory with the Run's environment. It connects to
 * its private Unix socket (the protocol: frames, see server/functions/frames.ts), points fd 0 at
 * /dev/null, imports the source once as the module `function`, resolves the handler, and answers
 * one frame per request frame. print() and sys.stdout/sys.stderr writes during a call are captured
 * per call and travel in the reply; raw fd 1/2 writes (child processes, C code) reach the server
 * on the worker's stdout/stderr pipes. The module `kruntime` (Request, Response) is importable by
 * handlers.
 */
export const KRUNTIME_MODULE = String.raw`
import json as _json

class Request:
    """One invocation: body (bytes), headers (dict, lower-case names), content_type, invocation_id."""
    __slots__ = ("body", "headers", "content_type", "invocation_id")

    def __init__(self, body, headers, content_type, invocation_id):
        self.body = body
        self.headers = headers
        self.content_type = content_type
        self.invocation_id = invocation_id

    def json(self):
        """The body parsed as JSON."""
        return _json.loads(self.body)

    def text(self):
        """The body decoded as UTF-8."""
        return self.body.decode("utf-8")

    def __repr__(self):
        return "Request(invocation_id=%r, content_type=%r, %d bytes)" % (
            self.invocation_id, self.content_type, len(self.body))


class Response:
    """A response with a status, content type and headers; body is bytes, str or a JSON value."""
    __slots__ = ("body", "status", "content_type", "headers")

    def __init__(self, body=b"", status=200, content_type=None, headers=None):
        self.body = body
        self.status = status
        self.content_type = content_type
        self.headers = headers or {}
`;

export const FUNCTION_BOOTSTRAP = String.raw`import os, sys
def _kruntime_worker():
    import io, json, socket, struct, time, traceback, types, importlib.util
    channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    channel.connect(sys.argv[1])
    rfd = wfd = channel.fileno()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    source, handler_name, max_response = sys.argv[2], sys.argv[3], int(sys.argv[4])
    del sys.argv[1:]
    kr = types.ModuleType("kruntime")
    exec(KRUNTIME_MODULE, kr.__dict__)
    sys.modules["kruntime"] = kr
    Request, Response = kr.Request, kr.Response
    pack, loads = struct.pack, json.loads
    LIMIT = 1 << 20

    class Capture(io.TextIOBase):
        def __init__(self, real):
            self.parts, self.size, self.real = [], 0, real
        def write(self, s):
            if not isinstance(s, str):
                raise TypeError("write() argument must be str, not " + type(s).__name__)
            if self.size < LIMIT:
                self.parts.append(s)
                self.size += len(s)
            return len(s)
        def writable(self):
            return True
        @property
        def encoding(self):
            return "utf-8"
        def isatty(self):
            return False
        def fileno(self):
            # Child processes given sys.stdout/sys.stderr write to the real pipes (logged raw).
            return self.real.fileno()
        def take(self):
            text = "".join(self.parts)
            if self.size > LIMIT:
                text = text[:LIMIT] + "\n[... output cut at 1 MiB ...]\n"
            self.parts, self.size = [], 0
            return text

    real_out, real_err = sys.stdout, sys.stderr
    out, err = Capture(real_out), Capture(real_err)

    encode = json.JSONEncoder(separators=(",", ":")).encode
    unpack_from = struct.unpack_from

    def send(header, body=b""):
        h = encode(header).encode()
        view = memoryview(pack(">II", len(h), len(body)) + h + body)
        while view:
            view = view[os.write(wfd, view):]

    pending = bytearray()

    def read_frame():
        # One read usually brings a whole request frame; keep what follows for the next one.
        while len(pending) < 8:
            chunk = os.read(rfd, 262144)
            if not chunk:
                os._exit(0)
            pending.extend(chunk)
        hl, bl = unpack_from(">II", pending)
        end = 8 + hl + bl
        while len(pending) < end:
            chunk = os.read(rfd, max(262144, end - len(pending)))
            if not chunk:
                os._exit(0)
            pending.extend(chunk)
        header = loads(bytes(pending[8:8 + hl]))
        body = bytes(pending[8 + hl:end])
        del pending[:end]
        return header, body

    def logs(header):
        o, e = out.take(), err.take()
        if o:
            header["o"] = o
        if e:
            header["e"] = e
        return header

    def failure(exc, skip):
        tb = exc.__traceback__
        for _ in range(skip):
            if tb is not None:
                tb = tb.tb_next
        text = "".join(traceback.format_exception(type(exc), exc, tb))
        if len(text) > 8192:
            text = "[... traceback cut ...]\n" + text[-8000:]
        return {"t": type(exc).__name__, "m": str(exc), "b": text}

    sys.stdout, sys.stderr = out, err
    try:
        spec = importlib.util.spec_from_file_location("function", source)
        module = importlib.util.module_from_spec(spec)
        sys.modules["function"] = module
        spec.loader.exec_module(module)
        handler = module
        for part in handler_name.split("."):
            try:
                handler = getattr(handler, part)
            except AttributeError:
                raise AttributeError("handler %r not found in the source (no attribute %r)" % (handler_name, part)) from None
        if not callable(handler):
            raise TypeError("handler %r is not callable (it is a %s)" % (handler_name, type(handler).__name__))
    except BaseException as exc:
        sys.stdout, sys.stderr = real_out, real_err
        f = failure(exc, 1)
        send(logs({"k": "fail", "error": f["t"] + ": " + f["m"] + "\n" + f["b"]}))
        # Stay until the server hangs up (it kills us once it has the frame): exiting now would
        # race our exit against the frame, and the server could see only "exited while loading".
        while os.read(rfd, 65536):
            pass
        return
    sys.stdout, sys.stderr = real_out, real_err
    send(logs({"k": "ready"}))

    while True:
        h, body = read_frame()
        request = Request(body, h["h"], h["c"], h["i"])
        sys.stdout, sys.stderr = out, err
        try:
            result = handler(request)
            status, ctype, headers = 200, None, None
            if isinstance(result, Response):
                status, ctype, headers, result = result.status, result.content_type, result.headers, result.body
                if result is None:
                    result = b""
            if isinstance(result, (bytes, bytearray, memoryview)):
                data = bytes(result)
                ctype = ctype or "application/octet-stream"
            elif isinstance(result, str):
                data = result.encode("utf-8")
                ctype = ctype or "text/plain; charset=utf-8"
            else:
                data = encode(result).encode("utf-8")
                ctype = ctype or "application/json"
            reply = {"k": "ok", "s": int(status), "c": str(ctype)}
            if headers:
                reply["h"] = {str(k).lower(): str(v) for k, v in headers.items()}
        except BaseException as exc:
            sys.stdout, sys.stderr = real_out, real_err
            send(logs({"k": "error", "x": failure(exc, 1)}))
            continue
        sys.stdout, sys.stderr = real_out, real_err
        if len(data) > max_response:
            send(logs({"k": "big", "n": len(data)}))
        else:
            send(logs(reply), data)
KRUNTIME_MODULE = ${JSON.stringify(KRUNTIME_MODULE)}
_kruntime_worker()
`;
