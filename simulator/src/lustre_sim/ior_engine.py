"""IOR re-enacted with real file I/O.

The options, the file names (``-o`` path, ``.%08d`` per rank with ``-F``),
the offsets (segments of ``tasks x blocksize`` in a shared file), the task
reordering for reads (``-C`` with ``-Q``), fsync (``-e``), stonewalling
(``-D`` with ``-O stoneWallingWearOut=1``) and the printed report follow IOR
3.3.0 / 4.0.0 of hpc/ior (``src/ior.c``, ``src/ior-output.c``,
``src/utilities.c``).  Every figure is measured: N worker processes (the MPI
ranks) open, write or read, fsync and close real files, meet at barriers like
``MPI_Barrier``, and the report reduces their timestamps as IOR does
(earliest start to latest end of each phase).
"""

import math
import multiprocessing
import os
import socket
import sys
import time

from lustre_sim import mdtest_engine

SUPPORTED_VERSIONS = ("3.3.0", "4.0.0")
MIB = 1 << 20
MB = 1000000


class UsageError(Exception):
    pass


class Abort(Exception):
    """A rank hit an error IOR reports with ERR() and aborts the job on."""


def parse_size(text):
    """IOR's string_to_bytes: a number with an optional k/m/g/t/p suffix (powers of 1024)."""
    return mdtest_engine.parse_bytes(text)


class Options:
    def __init__(self):
        self.api = "POSIX"
        self.block_size = MIB
        self.transfer_size = 256 * 1024
        self.segments = 1
        self.repetitions = 1
        self.test_file = "testFile"
        self.file_per_proc = False
        self.reorder_tasks = False
        self.task_per_node_offset = 1
        self.fsync = False
        self.write = False
        self.read = False
        self.check_write = False
        self.check_read = False
        self.keep_file = False
        self.verbose = 0
        self.deadline = 0
        self.wear_out = False
        self.barriers = False
        self.summary_format = "default"


FLAGS = {"w": "write", "r": "read", "F": "file_per_proc", "C": "reorder_tasks", "e": "fsync",
         "k": "keep_file", "W": "check_write", "R": "check_read", "g": "barriers"}
VALUES = {"a", "b", "t", "s", "i", "o", "Q", "D", "O", "N"}
UNSUPPORTED = {"Z": "random task reordering (-Z)", "z": "random offsets (-z)", "c": "collective I/O (-c)",
               "E": "an existing test file (-E)", "m": "multiple files (-m)", "u": "unique directories (-u)",
               "f": "script files (-f)", "Y": "fsync per write (-Y)", "B": "O_DIRECT (-B)"}


def parse_args(argv):
    opts = Options()
    position = 0
    while position < len(argv):
        word = argv[position]
        position += 1
        if word == "-v":
            opts.verbose += 1
            continue
        if word.startswith("--posix.odirect"):
            raise UsageError("O_DIRECT (--posix.odirect) is not simulated")
        if not word.startswith("-") or len(word) < 2:
            raise UsageError("Invalid argument: %s" % word)
        letters = word[1:]
        while letters:
            letter, letters = letters[0], letters[1:]
            if letter in FLAGS:
                setattr(opts, FLAGS[letter], True)
                continue
            if letter == "v":
                opts.verbose += 1
                continue
            if letter in UNSUPPORTED:
                raise UsageError("%s is not simulated" % UNSUPPORTED[letter])
            if letter not in VALUES:
                raise UsageError("Invalid option: -%s" % letter)
            if letters:
                value, letters = letters, ""
            elif position < len(argv):
                value = argv[position]
                position += 1
            else:
                raise UsageError("option -%s requires an argument" % letter)
            _set_value(opts, letter, value)
    if not opts.write and not opts.read:
        opts.write = opts.read = True
    if opts.transfer_size <= 0 or opts.block_size <= 0:
        raise UsageError("block size and transfer size must be positive")
    if opts.block_size % opts.transfer_size:
        raise UsageError("block size must be a multiple of transfer size")
    if opts.segments < 1 or opts.repetitions < 1:
        raise UsageError("segment count and repetitions must be at least 1")
    return opts


def _set_value(opts, letter, value):
    try:
        if letter == "a":
            if value.upper() != "POSIX":
                raise UsageError("API %s is not simulated (only POSIX)" % value)
            opts.api = "POSIX"
        elif letter == "b":
            opts.block_size = parse_size(value)
        elif letter == "t":
            opts.transfer_size = parse_size(value)
        elif letter == "s":
            opts.segments = int(value)
        elif letter == "i":
            opts.repetitions = int(value)
        elif letter == "o":
            opts.test_file = value
        elif letter == "Q":
            opts.task_per_node_offset = int(value)
        elif letter == "D":
            opts.deadline = int(value)
        elif letter == "N":
            raise UsageError("-N (a subset of the tasks) is not simulated")
        elif letter == "O":
            key, _, setting = value.partition("=")
            if key == "stoneWallingWearOut":
                opts.wear_out = setting.strip() not in ("", "0")
            elif key == "summaryFormat":
                if setting.lower() != "default":
                    raise UsageError("summaryFormat=%s is not simulated (only default)" % setting)
            else:
                raise UsageError("-O %s is not simulated" % key)
    except ValueError:
        raise UsageError("invalid number '%s' for -%s" % (value, letter))
    except mdtest_engine.UsageError as error:
        raise UsageError(str(error))


def human_readable(value):
    """utilities.c HumanReadable(value, BASE_TWO)."""
    for unit, name in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB")):
        if value >= unit:
            if value % unit:
                return "%.2f %s" % (value / float(unit), name)
            return "%d %s" % (value // unit, name)
    return "%d bytes" % value


def pp_double(number, append):
    """ior-output.c PPDouble with left justification."""
    if number < 0:
        return "   -      %s" % append
    precision = 6 if number < 1 else (2 if number < 3600 else 0)
    return "%-10.*f%s" % (precision, number, append)


def current_time():
    return time.strftime("%a %b %e %H:%M:%S %Y", time.localtime())


class Plan:
    def __init__(self, opts, size, nodes, hosts=None, client_mib_s=None):
        self.opts = opts
        self.size = size
        self.nodes = max(1, min(nodes, size))
        self.tasks_per_node = -(-size // self.nodes)
        self.aggregate = opts.block_size * opts.segments * size
        self.transfers_per_block = opts.block_size // opts.transfer_size
        # Bytes per second each rank may move: its host's cap shared by the host's ranks (None: no cap).
        self.rank_rate = [None] * size
        if hosts and client_mib_s and len(hosts) == size:
            for rank, host in enumerate(hosts):
                if host in client_mib_s:
                    self.rank_rate[rank] = client_mib_s[host] * MIB / hosts.count(host)

    def file_name(self, rank):
        if self.opts.file_per_proc:
            return "%s.%08d" % (self.opts.test_file, rank)
        return self.opts.test_file

    def offset(self, rank, segment, transfer):
        opts = self.opts
        if opts.file_per_proc:
            base = segment * opts.block_size
        else:
            base = (segment * self.size + rank) * opts.block_size
        return base + transfer * opts.transfer_size

    def read_rank(self, rank):
        """Whose data a rank reads: with -C, the rank taskPerNodeOffset nodes further on (ior.c)."""
        if not self.opts.reorder_tasks:
            return rank
        return (rank + (self.opts.task_per_node_offset * self.tasks_per_node) % self.size) % self.size


def _buffer(plan, data_rank):
    # IOR fills its buffer from the writer's rank; any fixed per-rank bytes serve for -W/-R checks.
    seed = bytes(((data_rank * 131 + i) % 251 for i in range(251)))
    count = plan.opts.transfer_size
    return (seed * (count // len(seed) + 1))[:count]


def _errno_text(error):
    return "errno %d, %s" % (error.errno or 0, os.strerror(error.errno or 0))


class Rank:
    def __init__(self, plan, rank, barrier, shared):
        self.plan = plan
        self.rank = rank
        self.barrier = barrier
        self.shared = shared

    def phase(self, access, iteration):
        """One write or read phase; returns this rank's timestamps and bytes moved."""
        plan = self.plan
        opts = plan.opts
        data_rank = plan.read_rank(self.rank) if access == "read" else self.rank
        name = plan.file_name(data_rank)
        expected = _buffer(plan, data_rank)
        self.barrier.wait()
        times = {"open_start": time.time()}
        flags = os.O_WRONLY | os.O_CREAT if access == "write" else os.O_RDONLY
        try:
            handle = os.open(name, flags, 0o664)
        except OSError as error:
            raise Abort('open64("%s", %d, %#o) failed, %s (aiori-POSIX.c:412)'
                        % (name, flags, 0o664, _errno_text(error)))
        times["open_end"] = time.time()
        if opts.barriers:
            self.barrier.wait()
        times["xfer_start"] = time.time()
        moved, stonewall = self._transfer(handle, access, expected, times["xfer_start"])
        if access == "write" and opts.fsync:
            os.fsync(handle)
        times["xfer_end"] = time.time()
        if opts.barriers:
            self.barrier.wait()
        times["close_start"] = time.time()
        os.close(handle)
        times["close_end"] = time.time()
        self.barrier.wait()
        return {"times": times, "bytes": moved, "stonewall": stonewall}

    def _transfer(self, handle, access, expected, start):
        plan = self.plan
        opts = plan.opts
        total_pairs = opts.segments * plan.transfers_per_block
        limit = total_pairs
        if access == "read" and opts.deadline and opts.wear_out:
            # Reads cover what the stonewalled write left behind (IOR's pairs_accessed).
            limit = min(total_pairs, self.shared["pairs"].value or total_pairs)
        done = 0
        stonewall = None
        # With wear-out, reads cover exactly the agreed pairs: no second agreement in the read phase.
        watch = opts.deadline and not (access == "read" and opts.wear_out)
        while done < limit:
            if watch and stonewall is None and time.time() - start >= opts.deadline:
                stonewall = (time.time() - start, done * opts.transfer_size)
                if not opts.wear_out:
                    break
                limit = self._wear_out_limit(done)
                if done >= limit:
                    break
            segment, transfer = divmod(done, plan.transfers_per_block)
            offset = plan.offset(self.plan.read_rank(self.rank) if access == "read" else self.rank,
                                 segment, transfer)
            self._one(handle, access, offset, expected)
            done += 1
            rate = plan.rank_rate[self.rank]
            if rate:
                # a capped client: never ahead of its rate (slow by construction, whatever the machine)
                ahead = start + done * opts.transfer_size / rate - time.time()
                if ahead > 0:
                    time.sleep(ahead)
        if opts.deadline and opts.wear_out and stonewall is None and access == "write":
            # Finished before the deadline: still take part in the agreement on the pair count.
            stonewall = (time.time() - start, done * opts.transfer_size)
            self._wear_out_limit(done)
        return done * opts.transfer_size, stonewall

    def _wear_out_limit(self, done):
        """All ranks agree on the largest count any rank reached, as IOR's wear-out does."""
        pairs = self.shared["pairs"]
        with pairs.get_lock():
            pairs.value = max(pairs.value, done)
        self.barrier.wait()
        return pairs.value

    def _one(self, handle, access, offset, expected):
        size = len(expected)
        if access == "write":
            try:
                written = os.pwrite(handle, expected, offset)
            except OSError as error:
                raise Abort("write(%d, %#x, %d) failed, %s (aiori-POSIX.c:550)"
                            % (handle, id(expected) & 0xffffffffffff, size, _errno_text(error)))
            if written != size:
                raise Abort("write(%d, ..., %d) wrote only %d bytes (aiori-POSIX.c:561)" % (handle, size, written))
            return
        try:
            data = os.pread(handle, size, offset)
        except OSError as error:
            raise Abort("read(%d, %#x, %d) failed, %s (aiori-POSIX.c:550)"
                        % (handle, id(expected) & 0xffffffffffff, size, _errno_text(error)))
        if len(data) != size:
            raise Abort("read(%d, ..., %d) read only %d bytes at offset %d (aiori-POSIX.c:561)"
                        % (handle, size, len(data), offset))
        if self.plan.opts.check_read and data != expected:
            raise Abort("data check error at offset %d of the data of rank %d" % (offset, self.plan.read_rank(self.rank)))

    def remove(self):
        plan = self.plan
        self.barrier.wait()
        start = time.time()
        if plan.opts.file_per_proc or self.rank == 0:
            try:
                os.unlink(plan.file_name(self.rank))
            except FileNotFoundError:
                pass
        self.barrier.wait()
        return time.time() - start


def _rank_main(plan, rank, barrier, shared, queue):
    worker = Rank(plan, rank, barrier, shared)
    reports = []
    try:
        for _iteration in range(plan.opts.repetitions):
            report = {}
            if plan.opts.write:
                report["write"] = worker.phase("write", _iteration)
            if plan.opts.read:
                report["read"] = worker.phase("read", _iteration)
            if not plan.opts.keep_file:
                report["remove"] = worker.remove()
            reports.append(report)
        queue.put((rank, reports, None))
    except Abort as error:
        barrier.abort()
        queue.put((rank, None, "ior ERROR: %s" % error))
    except multiprocessing.BrokenBarrierError:
        queue.put((rank, None, None))
    except BaseException as error:  # a rank must always report, or the launcher waits forever
        barrier.abort()
        queue.put((rank, None, "ior ERROR: %r" % error))


def _reduce(reports, access):
    """IOR's ReduceIterResults: earliest start and latest end of each timer over the ranks."""
    phases = [report[access] for report in reports]
    first = {key: min(p["times"][key] for p in phases) for key in ("open_start", "xfer_start", "close_start")}
    last = {key: max(p["times"][key] for p in phases) for key in ("open_end", "xfer_end", "close_end")}
    moved = sum(p["bytes"] for p in phases)
    stonewalls = [p["stonewall"] for p in phases if p["stonewall"] is not None]
    return {
        "open": last["open_end"] - first["open_start"],
        "xfer": last["xfer_end"] - first["xfer_start"],
        "close": last["close_end"] - first["close_start"],
        "total": last["close_end"] - first["open_start"],
        "bytes": moved,
        "stonewall_time": max(s[0] for s in stonewalls) if stonewalls else None,
        "stonewall_bytes": sum(s[1] for s in stonewalls) if stonewalls else None,
    }


def _options_block(out, plan, version):
    opts = plan.opts
    rows = [("api", opts.api), ("apiVersion", ""), ("test filename", opts.test_file),
            ("access", "file-per-process" if opts.file_per_proc else "single-shared-file"),
            ("type", "independent"), ("segments", opts.segments), ("ordering in a file", "sequential")]
    if opts.reorder_tasks:
        rows += [("ordering inter file", "constant task offset"), ("task offset", opts.task_per_node_offset)]
    else:
        rows.append(("ordering inter file", "no tasks offsets"))
    rows += [("nodes", plan.nodes), ("tasks", plan.size), ("clients per node", plan.tasks_per_node),
             ("repetitions", opts.repetitions), ("xfersize", human_readable(opts.transfer_size)),
             ("blocksize", human_readable(opts.block_size)), ("aggregate filesize", human_readable(plan.aggregate))]
    if version != "3.3.0" and opts.verbose:
        rows.append(("verbose", opts.verbose))
    if opts.deadline:
        rows += [("stonewallingTime", opts.deadline), ("stoneWallingWearOut", int(opts.wear_out))]
    out.write("\nOptions: \n")
    for key, value in rows:
        out.write("%-20s: %s\n" % (key, value))


def _result_row(out, plan, access, point, iteration):
    transfers = point["bytes"] / float(plan.opts.transfer_size)
    bandwidth = point["bytes"] / point["total"] if point["total"] > 0 else 0.0
    iops = transfers / point["xfer"] if point["xfer"] > 0 else 0.0
    latency = point["xfer"] / max(1.0, transfers / plan.size)
    out.write("%-10s" % access)
    out.write(pp_double(bandwidth / MIB, " "))
    out.write(pp_double(iops, " "))
    out.write(pp_double(latency, "  "))
    out.write(pp_double(plan.opts.block_size / 1024.0, " "))
    out.write(pp_double(plan.opts.transfer_size / 1024.0, " "))
    for key in ("open", "xfer", "close", "total"):
        out.write(pp_double(point[key], " "))
    out.write("%-4d\n" % iteration)


def _statistics(values):
    mean = sum(values) / len(values)
    deviation = math.sqrt(sum((mean - value) ** 2 for value in values) / len(values))
    return max(values), min(values), mean, deviation


def _summary_row(out, plan, access, points):
    opts = plan.opts
    times = [point["total"] for point in points]
    bandwidths = [point["bytes"] / point["total"] if point["total"] > 0 else 0.0 for point in points]
    ops = [point["bytes"] / float(opts.transfer_size) / point["total"] if point["total"] > 0 else 0.0
           for point in points]
    bw_max, bw_min, bw_mean, bw_sd = _statistics(bandwidths)
    op_max, op_min, op_mean, op_sd = _statistics(ops)
    out.write("%-9s " % access)
    for value in (bw_max / MIB, bw_min / MIB, bw_mean / MIB, bw_sd / MIB, op_max, op_min, op_mean, op_sd):
        out.write("%10.2f " % value)
    out.write("%10.5f " % (sum(times) / len(times)))
    stonewalled = [p for p in points if p["stonewall_time"]]
    if opts.wear_out and stonewalled:
        wall = sum(p["stonewall_time"] for p in stonewalled) / len(points)
        data = sum(p["stonewall_bytes"] for p in stonewalled) / len(points)
        out.write("%10.2f " % wall)
        out.write("%13.2f " % (data / wall / MIB if wall > 0 else 0.0))
    else:
        out.write("%10s " % "NA")
        out.write("%13s " % "NA")
    for width, value in ((5, 0), (6, plan.size), (3, plan.tasks_per_node), (4, opts.repetitions),
                         (3, int(opts.file_per_proc)), (5, int(opts.reorder_tasks)), (8, opts.task_per_node_offset),
                         (9, 0), (4, 0), (6, opts.segments), (8, opts.block_size), (8, opts.transfer_size)):
        out.write("%*d " % (width, value))
    out.write("%9.1f " % (points[0]["bytes"] / float(MIB)))
    out.write("%3s " % opts.api)
    out.write("%6d\n" % 0)


TASK_TIMERS = (("open_start", "open start"), ("open_end", "open stop"), ("xfer_start", "start"),
               ("xfer_end", "stop"), ("close_start", "close start"), ("close_end", "close stop"))


def _task_times(out, reports, access, iteration):
    """Verbosity 3: every rank's six stamps of the phase, one line each, in IOR's per-task timer form."""
    for rank, report in enumerate(reports):
        times = report[access]["times"]
        for key, name in TASK_TIMERS:
            out.write("Test 0: Iter=%d, Task=%d, Time=%f, %s %s\n" % (iteration, rank, times[key], access, name))


def run(argv, program="ior", size=1, nodes=1, version="3.3.0", out=None, hosts=None, client_mib_s=None):
    """Run IOR with ``size`` ranks on ``nodes`` nodes (``hosts``: the host of each rank); returns the exit status."""
    out = out or sys.stdout
    if version not in SUPPORTED_VERSIONS:
        version = "3.3.0"
    try:
        opts = parse_args(argv)
    except UsageError as error:
        out.write("ior ERROR: %s, (parse_options.c:1)\n" % error)
        return 1
    plan = Plan(opts, size, nodes, hosts, client_mib_s)
    out.write("IOR-%s: MPI Coordinated Test of Parallel I/O\n" % version)
    out.write("%-20s: %s\n" % ("Began", current_time()))
    out.write("%-20s: %s\n" % ("Command line", " ".join([program] + list(argv))))
    out.write("%-20s: Linux %s\n" % ("Machine", socket.gethostname()))
    out.write("%-20s: %d\n" % ("TestID", 0))
    out.write("%-20s: %s\n" % ("StartTime", current_time()))
    directory = os.path.dirname(os.path.abspath(opts.test_file))
    path = plan.file_name(0) if version != "3.3.0" else directory
    try:
        fs_line = mdtest_engine.filesystem_line(directory)
    except OSError as error:
        out.write("ior ERROR: unable to statfs() file system, %s (ior.c:1)\n" % _errno_text(error))
        return 1
    out.write("%-20s: %s\n" % ("Path", path))
    out.write("%-20s: %s\n" % ("FS", fs_line.split(": ", 1)[1]))
    _options_block(out, plan, version)
    out.write("\nResults: \n\n")
    out.write("access    bw(MiB/s)  IOPS       Latency(s)  block(KiB) xfer(KiB)  open(s)    wr/rd(s)   close(s)   "
              "total(s)   iter\n")
    out.write("------    ---------  ----       ----------  ---------- ---------  --------   --------   --------   "
              "--------   ----\n")
    out.flush()

    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(size)
    shared = {"pairs": context.Value("q", 0)}
    queue = context.Queue()
    workers = []
    for rank in range(size):
        process = context.Process(target=_rank_main, args=(plan, rank, barrier, shared, queue), daemon=True)
        process.start()
        workers.append(process)
    by_rank = {}
    errors = []
    for _ in range(size):
        rank, reports, error = queue.get()
        if reports is None:
            if error:
                errors.append(error)
        else:
            by_rank[rank] = reports
    for process in workers:
        process.join(timeout=5)
        if process.is_alive():
            process.terminate()
    if errors or len(by_rank) != size:
        for error in errors:
            out.write(error + "\n")
        out.write("MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\nwith errorcode -1.\n")
        out.flush()
        return 1
    points = {"write": [], "read": []}
    for iteration in range(opts.repetitions):
        reports = [by_rank[rank][iteration] for rank in range(size)]
        for access in ("write", "read"):
            if access in reports[0]:
                if opts.verbose:
                    out.write("Commencing %s performance test: %s\n" % (access, current_time()))
                if opts.verbose >= 3:
                    _task_times(out, reports, access, iteration)
                point = _reduce(reports, access)
                points[access].append(point)
                _result_row(out, plan, access, point, iteration)
        if "remove" in reports[0]:
            out.write("remove    -          -          -           -          -          -          -          -          ")
            out.write(pp_double(max(report["remove"] for report in reports), " "))
            out.write("%-4d\n" % iteration)
    if opts.deadline and opts.wear_out and points["write"]:
        out.write("Pairs deadlineForStonewallingaccessed: %d\n" % shared["pairs"].value)
    for access, label in (("write", "Max Write: "), ("read", "Max Read:  ")):
        if points[access]:
            best = max(p["bytes"] / p["total"] if p["total"] > 0 else 0.0 for p in points[access])
            out.write("%s%.2f MiB/sec (%.2f MB/sec)\n" % (label, best / MIB, best / MB))
    out.write("\nSummary of all tests:\n")
    out.write("%-9s %10s %10s %10s %10s %10s %10s %10s %10s %10s %10s %13s" % (
        "Operation", "Max(MiB)", "Min(MiB)", "Mean(MiB)", "StdDev", "Max(OPs)", "Min(OPs)", "Mean(OPs)", "StdDev",
        "Mean(s)", "Stonewall(s)", "Stonewall(MiB)"))
    out.write(" Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt ")
    out.write("%8s %8s %9s %5s" % (" blksiz", "xsize", "aggs(MiB)", "API"))
    out.write(" RefNum\n")
    for access in ("write", "read"):
        if points[access]:
            _summary_row(out, plan, access, points[access])
    out.write("%-20s: %s\n" % ("Finished", current_time()))
    out.flush()
    return 0
