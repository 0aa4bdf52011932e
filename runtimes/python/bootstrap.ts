/**
 * The warm Python bootstrap, run as `python3 -c BOOTSTRAP`. It signals readiness with one "R" on
 * stdout, reads its job from stdin until EOF (NUL-separated: cwd, script, argc, args..., envc,
 * KEY=VALUE...), points stdin at /dev/null, and then makes the interpreter look like
 * `python3 <script> <args...>` started in that directory with that environment: sys.argv,
 * sys.path[0], a fresh __main__ module, and tracebacks/exit statuses as a cold start prints them.
 */
export const PYTHON_BOOTSTRAP = String.raw`import sys, os
os.write(1, b"R")
def _kruntime_job():
    chunks = []
    while True:
        chunk = os.read(0, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    null = os.open(os.devnull, os.O_RDONLY)
    if null != 0:
        os.dup2(null, 0)
        os.close(null)
    fields = b"".join(chunks).split(b"\0")
    cwd, script, argc = os.fsdecode(fields[0]), os.fsdecode(fields[1]), int(fields[2])
    args = [os.fsdecode(a) for a in fields[3:3 + argc]]
    envc = int(fields[3 + argc])
    os.chdir(cwd)
    os.environ.clear()
    for pair in fields[4 + argc:4 + argc + envc]:
        key, _, value = pair.partition(b"=")
        os.environb[key] = value
    sys.argv[:] = [script] + args
    if not getattr(sys.flags, "safe_path", False):
        sys.path[0] = os.path.dirname(os.path.realpath(script))
    with open(script, "rb") as f:
        code = compile(f.read(), script, "exec", dont_inherit=True)
    main = type(sys)("__main__")
    main.__file__ = script
    main.__cached__ = None
    main.__builtins__ = sys.modules["builtins"]
    main.__loader__ = sys.modules["_frozen_importlib_external"].SourceFileLoader("__main__", script)
    sys.modules["__main__"] = main
    return code, main.__dict__
def _kruntime_uncaught(exc):
    tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
    exc.__traceback__ = tb
    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb
    sys.excepthook(type(exc), exc, tb)
    if isinstance(exc, KeyboardInterrupt):
        threading = sys.modules.get("threading")
        if threading is not None:
            threading._shutdown()
        import atexit, signal
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    sys.exit(1)
_kruntime_code, _kruntime_globals = _kruntime_job()
try:
    exec(_kruntime_code, _kruntime_globals)
except SystemExit:
    raise
except BaseException as _kruntime_exc:
    _kruntime_uncaught(_kruntime_exc)
`;
