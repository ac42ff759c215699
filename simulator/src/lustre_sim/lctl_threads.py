"""``lctl --threads``: really fork T workers sharing counters, like obd.c's shmem_* helpers."""

import ctypes
import math
import os
import sys
import time
import traceback

from .lctl_base import BAD_VERBOSE, CMD_HELP, get_verbose

MAX_THREADS = 4096


class ThreadShared:
    """State shared between the parent and its forked workers (counters, barriers, offsets)."""

    def __init__(self, threads):
        # Imported here: every lctl call loads this module, few use --threads (startup time).
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self.threads = threads
        self.lock = context.Lock()
        self.condition = context.Condition(self.lock)
        self.counters = context.RawArray(ctypes.c_uint64, max(threads, 1))
        self.offsets = context.RawArray(ctypes.c_uint64, max(threads, 1))
        self.running = context.RawValue(ctypes.c_int, 0)
        self.start_barrier = context.RawValue(ctypes.c_int, threads)
        self.stop_barrier = context.RawValue(ctypes.c_int, threads)
        self.start_time = context.RawValue(ctypes.c_double, 0.0)
        self.end_time = context.RawValue(ctypes.c_double, 0.0)
        self.stopping = context.RawValue(ctypes.c_int, 0)


class ThreadContext:
    """What a worker (``thread`` 1..T) sees; a plain single-process run uses thread 0."""

    def __init__(self, shared=None, thread=0, nthreads=1):
        self.shared = shared
        self.thread = thread
        self.nthreads = nthreads
        self._bumped = False

    def run_key(self):
        """One name for the whole command: the forked workers share their parent's pid, a plain run has its own."""
        return os.getppid() if self.shared is not None else os.getpid()

    def cmdname(self, func):
        return "%s-%d" % (func, self.thread) if self.thread else func

    def running(self):
        return self.shared is None or not self.shared.stopping.value

    def bump(self, amount):
        shared = self.shared
        if shared is None or not 0 < self.thread <= MAX_THREADS:
            return
        with shared.lock:
            shared.counters[self.thread - 1] += amount
            if not self._bumped:
                shared.running.value += 1
                self._bumped = True

    def wait_start(self):
        """shmem_start_time_locked: the last worker to arrive starts the clock and wakes all."""
        shared = self.shared
        if shared is None or not self.thread:
            return
        with shared.condition:
            shared.start_barrier.value -= 1
            if shared.start_barrier.value == 0:
                shared.start_time.value = time.time()
                shared.condition.notify_all()
            else:
                while shared.start_barrier.value > 0:
                    shared.condition.wait()

    def mark_end(self):
        shared = self.shared
        if shared is None or not self.thread:
            return
        with shared.lock:
            shared.stop_barrier.value -= 1
            if shared.stop_barrier.value == 0:
                shared.end_time.value = time.time()

    def set_offset(self, index, value):
        with self.shared.lock:
            self.shared.offsets[index] = value

    def take_offset(self, index, length):
        with self.shared.lock:
            value = self.shared.offsets[index]
            self.shared.offsets[index] = value + length
            return value


def c_float(value):
    """printf("%f") including glibc's spelling of infinities and NaN."""
    if math.isnan(value):
        return "-nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return "%f" % value


def divide(numerator, denominator):
    if denominator:
        return numerator / denominator
    if numerator:
        return math.inf
    return math.nan


class Snapshotter:
    """shmem_snap: print ``n/T Total: rate/second`` once all workers started and >1 s elapsed."""

    def __init__(self, shared, threads):
        self.shared = shared
        self.threads = threads
        self.previous = [0] * threads
        self.prev_time = 0.0
        self.prev_valid = False

    def snap(self, out):
        shared = self.shared
        with shared.lock:
            current = list(shared.counters[:self.threads])
            running = shared.running.value
        now = time.time()
        non_zero = 0
        total = 0
        for index in range(self.threads):
            delta = current[index] - self.previous[index]
            if delta:
                non_zero += 1
                total += delta
        seconds = now - self.prev_time
        if self.prev_valid and seconds > 1.0:
            out.write("%d/%d Total: %s/second\n" % (non_zero, self.threads,
                                                   c_float(total / seconds)))
            out.flush()
            self.previous = current
            self.prev_time = now
        if not self.prev_valid and running == self.threads:
            self.prev_valid = True
            self.previous = current
            self.prev_time = now


def run_threads(session, argv, run_worker):
    """jt_opt_threads: ``--threads <T>[.<reports>] <verbose> <dev> <command...>``.

    ``run_worker(thread_context, device, command_argv)`` runs in each forked child
    and returns its rc.
    """
    out = session.out
    if len(argv) < 5:
        return CMD_HELP
    spec = argv[1]
    report_count = -1
    try:
        if "." in spec:
            thread_text, report_text = spec.split(".", 1)
            threads = int(thread_text, 0)
            report_count = int(report_text, 0)
        else:
            threads = int(spec, 0)
        if threads < 0 or threads > MAX_THREADS:
            raise ValueError
    except ValueError:
        session.err.write("error: %s: invalid thread count '%s'\n"
                          % (session.ctx.cmdname(argv[0]), spec))
        return CMD_HELP
    verbose = get_verbose(session, argv[0], argv[2])
    if verbose == BAD_VERBOSE:
        return CMD_HELP
    device = argv[3]
    command = argv[4:]
    if verbose != 0:
        out.write("%s: starting %d threads on device %s running %s\n"
                  % (argv[0], threads, device, " ".join(command)[:128]))
    out.flush()
    session.err.flush()

    shared = ThreadShared(threads)
    node = session.node
    children = {}
    next_report = verbose
    for number in range(1, threads + 1):
        pid = os.fork()
        if pid == 0:
            rc = 1
            try:
                context = ThreadContext(shared, number, threads)
                rc = run_worker(context, device, command)
            except SystemExit as exit_request:
                rc = exit_request.code if isinstance(exit_request.code, int) else 1
            except BaseException:
                traceback.print_exc()
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(rc & 0xff if rc >= 0 else (-rc) & 0xff)
        children[pid] = number
        node.register_helper(pid, "lctl --threads %d worker #%d on device %s: %s"
                             % (threads, number, device, " ".join(command)))
        if verbose > 0 and (number >= next_report or number >= threads):
            next_report += verbose
            out.write("%s: thread #%d (PID %d) started\n" % (argv[0], number, pid))

    rc = 0
    snapshotter = Snapshotter(shared, threads)
    live = threads
    period = -verbose if verbose < 0 else None
    deadline = time.monotonic() + period if period else None
    while live > 0:
        woke = False
        while live > 0:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            woke = True
            node.unregister_helper(pid)
            err = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0
            if err or os.WIFSIGNALED(status):
                out.flush()
                session.err.write("%s: PID %d had rc=%d\n" % (argv[0], pid, err))
                session.err.flush()
            if not rc:
                rc = err
            live -= 1
        if deadline is not None and time.monotonic() >= deadline:
            woke = True
            deadline = time.monotonic() + period
        if woke and verbose < 0:
            snapshotter.snap(out)
            if report_count > 0:
                report_count -= 1
                if report_count == 0:
                    shared.stopping.value = 1
        if live > 0 and not woke:
            time.sleep(0.02)

    total = sum(shared.counters[:threads])
    seconds = shared.end_time.value - shared.start_time.value
    out.write("Total: total %d threads %d sec %s %s/second\n"
              % (total, threads, c_float(seconds), c_float(divide(total, seconds))))
    out.flush()
    return rc
