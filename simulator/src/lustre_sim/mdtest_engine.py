"""mdtest re-enacted with real file system operations.

The tree layout, item names, phase order, timing points and the printed
report follow mdtest 3.3.0 / 4.0.0 of hpc/ior (``src/mdtest.c``).  Every
number in the report is measured: N worker processes (the MPI ranks) do the
real mkdir/stat/open/write/read/unlink/rmdir calls under ``-d``, wait for each
other at every phase boundary (like ``MPI_Barrier``), and time each phase.

Not simulated (rejected with a message): shared file ``-S``, collective
creates ``-c``, ``-n`` together with ``-I``, several ``-d`` paths.
"""

import itertools
import math
import multiprocessing
import os
import random
import sys
import time

SUPPORTED_VERSIONS = ("3.3.0", "4.0.0")

DIR_CREATE, DIR_STAT, DIR_READ, DIR_REMOVE = 0, 1, 2, 3
FILE_CREATE, FILE_STAT, FILE_READ, FILE_REMOVE = 4, 5, 6, 7
TREE_CREATE, TREE_REMOVE = 8, 9
TABLE_SIZE = 10

NAMES_33 = {
    DIR_CREATE: "Directory creation        :",
    DIR_STAT: "Directory stat            :",
    DIR_REMOVE: "Directory removal         :",
    FILE_CREATE: "File creation             :",
    FILE_STAT: "File stat                 :",
    FILE_READ: "File read                 :",
    FILE_REMOVE: "File removal              :",
    TREE_CREATE: "Tree creation             :",
    TREE_REMOVE: "Tree removal              :",
}
NAMES_40 = {
    DIR_CREATE: "Directory creation",
    DIR_STAT: "Directory stat",
    DIR_REMOVE: "Directory removal",
    FILE_CREATE: "File creation",
    FILE_STAT: "File stat",
    FILE_READ: "File read",
    FILE_REMOVE: "File removal",
    TREE_CREATE: "Tree creation",
    TREE_REMOVE: "Tree removal",
}

DIRMODE = 0o775
FILEMODE = 0o664


class UsageError(Exception):
    pass


class Abort(Exception):
    """A rank hit an error mdtest reports with FAIL() and aborts the job on."""


def parse_bytes(text):
    """mdtest's string_to_bytes: a number with an optional k/m/g/t/p suffix (powers of 1024)."""
    text = str(text).strip()
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
    factor = 1
    if text and text[-1].lower() in units:
        factor = units[text[-1].lower()]
        text = text[:-1]
    try:
        return int(text) * factor
    except ValueError:
        raise UsageError("invalid number '%s'" % text)


# option letter -> (attribute, kind); kind: flag, count, int, bytes, str
OPTIONS = {
    "a": ("api", "str"), "b": ("branch", "int"), "B": ("no_barriers", "flag"),
    "C": ("create_only", "flag"), "d": ("path", "str"), "D": ("dirs_only", "flag"),
    "e": ("read_bytes", "bytes"), "E": ("read_only", "flag"), "f": ("first", "int"),
    "F": ("files_only", "flag"), "i": ("iterations", "int"), "I": ("items_per_dir", "int"),
    "k": ("make_node", "flag"), "l": ("last", "int"), "L": ("leaf_only", "flag"),
    "n": ("items", "int"), "N": ("nstride", "int"), "p": ("pre_delay", "int"),
    "P": ("print_rate_and_time", "flag"), "r": ("remove_only", "flag"),
    "R": ("randomize", "flag"), "s": ("stride", "int"), "S": ("shared_file", "flag"),
    "c": ("collective_creates", "flag"), "t": ("time_unique_dir_overhead", "flag"),
    "T": ("stat_only", "flag"), "u": ("unique_dir_per_task", "flag"),
    "v": ("verbose", "count"), "V": ("verbose", "int"), "w": ("write_bytes", "bytes"),
    "W": ("stonewall_seconds", "int"), "x": ("stonewall_file", "str"),
    "X": ("verify_read", "flag"), "y": ("sync_file", "flag"), "Y": ("call_sync", "flag"),
    "z": ("depth", "int"), "Z": ("print_time", "flag"),
}


class Options:
    def __init__(self):
        self.api = "POSIX"
        self.branch = 1
        self.depth = 0
        self.items = 0
        self.items_per_dir = 0
        self.iterations = 1
        self.path = None
        self.read_bytes = 0
        self.write_bytes = 0
        self.nstride = 0
        self.pre_delay = 0
        self.stride = 1
        self.first = 1
        self.last = 0
        self.verbose = 0
        self.stonewall_seconds = 0
        self.stonewall_file = None
        self.random_seed = 0
        for attribute, kind in OPTIONS.values():
            if kind == "flag":
                setattr(self, attribute, False)


def parse_args(argv):
    opts = Options()
    args = list(argv)
    position = 0
    while position < len(args):
        word = args[position]
        position += 1
        if word.startswith("--random-seed"):
            value = word.split("=", 1)[1] if "=" in word else None
            if value is None:
                if position >= len(args):
                    raise UsageError("option --random-seed needs an argument")
                value = args[position]
                position += 1
            opts.random_seed = int(value)
            continue
        if word.startswith("--verify-read"):
            opts.verify_read = True
            continue
        if not word.startswith("-") or len(word) < 2:
            raise UsageError("invalid argument: %s" % word)
        letter = word[1]
        if letter not in OPTIONS:
            raise UsageError("invalid option -- '%s'" % letter)
        attribute, kind = OPTIONS[letter]
        if kind == "flag":
            if len(word) > 2:
                raise UsageError("option -%s takes no argument" % letter)
            setattr(opts, attribute, True)
            continue
        if kind == "count":
            opts.verbose += len(word) - 1
            continue
        value = word[2:].lstrip("=")
        if not value:
            if position >= len(args):
                raise UsageError("option -%s needs an argument" % letter)
            value = args[position]
            position += 1
        if kind == "int":
            try:
                value = int(value)
            except ValueError:
                raise UsageError("invalid number '%s' for -%s" % (value, letter))
        elif kind == "bytes":
            value = parse_bytes(value)
        setattr(opts, attribute, value)
    return opts


class Plan:
    """The derived quantities mdtest computes from the options before running."""

    def __init__(self, opts, size):
        self.opts = opts
        self.size = size
        # ops/s all ranks together may reach (the client's MDT curve at this task count), None: unthrottled
        self.rate_ops_s = None
        for flag, text in (("shared_file", "-S"), ("collective_creates", "-c"),
                           ("make_node", "-k"), ("stonewall_file", "-x")):
            if getattr(opts, flag):
                raise UsageError("%s is not simulated by lustre-sim" % text)
        if opts.items and opts.items_per_dir:
            raise UsageError("-n together with -I is not simulated by lustre-sim")
        if opts.path and "@" in opts.path:
            raise UsageError("several -d paths are not simulated by lustre-sim")
        if opts.api.upper() != "POSIX":
            raise UsageError("only the POSIX API is simulated (got -a %s)" % opts.api)
        if opts.iterations < 1:
            raise UsageError("iterations must be at least 1")
        self.create = opts.create_only
        self.stat = opts.stat_only
        self.read = opts.read_only
        self.remove = opts.remove_only
        if not (self.create or self.stat or self.read or self.remove):
            self.create = self.stat = self.read = self.remove = True
        self.dirs = opts.dirs_only
        self.files = opts.files_only
        if not self.dirs and not self.files:
            self.dirs = self.files = True
        if opts.stonewall_seconds > 0 and (opts.branch > 1 or opts.no_barriers):
            raise Abort("Error, stone wall timer does only work with a branch factor <= 1 "
                        "(current is %d) and with barriers\n" % opts.branch)
        depth, branch = opts.depth, opts.branch
        if depth <= 0 or branch < 1:
            self.num_dirs_in_tree = 1
        elif branch == 1:
            self.num_dirs_in_tree = depth + 1
        else:
            self.num_dirs_in_tree = (branch ** (depth + 1) - 1) // (branch - 1)
        items, items_per_dir = opts.items, opts.items_per_dir
        if items_per_dir > 0:
            if opts.leaf_only:
                items = items_per_dir * branch ** depth
            else:
                items = items_per_dir * self.num_dirs_in_tree
        elif opts.leaf_only:
            if branch <= 1:
                items_per_dir = items
            else:
                items_per_dir = items // branch ** depth
                items = items_per_dir * branch ** depth
        else:
            items_per_dir = items // self.num_dirs_in_tree
            items = items_per_dir * self.num_dirs_in_tree
        self.items = items
        self.items_per_dir = items_per_dir
        self.rand_array = None
        if opts.randomize:
            seed = opts.random_seed or int(time.time())
            self.random_seed = seed
            generator = random.Random(seed)
            order = list(range(items))
            generator.shuffle(order)
            self.rand_array = order
        else:
            self.random_seed = 0

    def items_line(self, tasks):
        total = tasks * self.items
        if self.files and self.dirs:
            return "%d tasks, %d files/directories" % (tasks, total)
        if self.files:
            return "%d tasks, %d files" % (tasks, total)
        return "%d tasks, %d directories" % (tasks, total)


def filesystem_line(path):
    stat = os.statvfs(path)
    total = stat.f_blocks * stat.f_frsize
    free = stat.f_bfree * stat.f_frsize
    used_percent = (1 - free / total) * 100 if total else 0.0
    size = total / float(1 << 30)
    unit = "GiB"
    if size > 1024:
        size /= 1024
        unit = "TiB"
    used_inodes = (1 - stat.f_ffree / stat.f_files) * 100 if stat.f_files else 0.0
    return "FS: %.1f %s   Used FS: %2.1f%%   Inodes: %.1f %s   Used Inodes: %2.1f%%" % (
        size, unit, used_percent, stat.f_files / float(1 << 20), "Mi", used_inodes)


def timestamp():
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime())


def pattern_bytes(count):
    # mdtest fills its write buffer with a rank/offset pattern; any fixed bytes do for timing.
    block = bytes(range(256))
    return (block * (count // 256 + 1))[:count]


# --------------------------------------------------------------------------
# one rank


class Rank:
    def __init__(self, plan, rank, barrier, results):
        self.plan = plan
        self.opts = plan.opts
        self.rank = rank
        self.size = plan.size
        self.barrier = barrier
        self.results = results
        self.write_buffer = pattern_bytes(self.opts.write_bytes) if self.opts.write_bytes else b""

    # mdtest's FAIL(): one line naming the rank, then MPI_Abort.
    def fail(self, function, message, error=None):
        reason = os.strerror(error.errno) if isinstance(error, OSError) and error.errno else "Success"
        sys.stdout.write("%s: Process %d: FAILED in %s, %s: %s\n"
                         % (timestamp(), self.rank, function, message, reason))
        sys.stdout.flush()
        raise Abort(message)

    def wait(self):
        if not self.opts.no_barriers:
            self.barrier.wait()

    def phase_end(self):
        if self.opts.call_sync:
            os.sync()
        self.wait()

    def tree_base(self, owner):
        return "mdtest_tree.%d" % owner if self.opts.unique_dir_per_task else "mdtest_tree"

    # -- directory tree ------------------------------------------------------

    def tree_dirs(self, base):
        """Paths (relative to testdir) of the tree in mdtest's creation order, with dir numbers."""
        branch, depth = self.opts.branch, self.opts.depth
        result = [("%s.0" % base, 0)]

        def walk(path, current_depth, dir_num):
            if current_depth > depth:
                return
            current = dir_num
            for _ in range(branch):
                child = "%s/%s.%d" % (path, base, current)
                result.append((child, current))
                walk(child, current_depth + 1, branch * current + 1)
                current += 1

        if depth > 0:
            walk("%s.0" % base, 1, 1)
        return result

    def create_tree(self, testdir, base):
        for relative, _ in self.tree_dirs(base):
            path = os.path.join(testdir, relative)
            try:
                os.mkdir(path, DIRMODE)
            except OSError as error:
                self.fail("create_remove_directory_tree", "Unable to create directory %s/" % path,
                          error)

    def remove_tree(self, testdir, base):
        for relative, _ in reversed(self.tree_dirs(base)):
            path = os.path.join(testdir, relative)
            try:
                os.rmdir(path)
            except OSError as error:
                self.fail("create_remove_directory_tree", "Unable to remove directory %s/" % path,
                          error)

    # -- items ---------------------------------------------------------------

    def item_dirs(self, top, base):
        """(directory, first item number) pairs holding items, in mdtest's order."""
        leaf_only, depth = self.opts.leaf_only, self.opts.depth
        pairs = []
        for relative, dir_num in self.tree_dirs(base):
            level = relative.count("/")
            if leaf_only and level != depth:
                continue
            parts = relative.split("/")[1:]
            pairs.append((os.path.join(top, *parts) if parts else top,
                          dir_num * self.plan.items_per_dir))
        return pairs

    def item_path(self, top, base, item_num, kind, name):
        """mdtest_stat/mdtest_read's path walk for an item number."""
        plan = self.plan
        if self.opts.leaf_only:
            item_num += plan.items_per_dir * (plan.num_dirs_in_tree - self.opts.branch ** self.opts.depth)
        item = "%s.%s%d" % (kind, name, item_num)
        parent = item_num // plan.items_per_dir if plan.items_per_dir else 0
        if parent > 0:
            item = "%s.%d/%s" % (base, parent, item)
            while parent > self.opts.branch:
                parent = (parent - 1) // self.opts.branch
                item = "%s.%d/%s" % (base, parent, item)
        return os.path.join(top, item)

    def item_paths(self, top, base, dirs, name):
        """This rank's item paths in mdtest's creation order (create_remove_items), one at a time: a stonewalled
        create of millions of items makes only the paths it reaches."""
        kind = "dir" if dirs else "file"
        for directory, first in self.item_dirs(top, base):
            for offset in range(self.plan.items_per_dir):
                yield os.path.join(directory, "%s.%s%d" % (kind, name, first + offset))

    def create_items(self, paths, dirs, deadline=None):
        """Create the items; with a stonewall deadline stop early and return how many were made."""
        done = 0
        for path in paths:
            if dirs:
                try:
                    os.mkdir(path, DIRMODE)
                except OSError as error:
                    self.fail("create_remove_items_helper",
                              "unable to create directory %s" % path, error)
            else:
                self.create_file(path)
            done += 1
            if deadline is not None and time.monotonic() >= deadline:
                break
        return done

    def create_file(self, path):
        try:
            descriptor = os.open(path, os.O_CREAT | os.O_WRONLY, FILEMODE)
        except OSError as error:
            self.fail("create_file", "unable to create file %s" % path, error)
        try:
            if self.write_buffer:
                written = os.write(descriptor, self.write_buffer)
                if written != len(self.write_buffer):
                    self.fail("create_file", "unable to write file %s" % path)
                if self.opts.sync_file:
                    os.fsync(descriptor)
        except OSError as error:
            self.fail("create_file", "unable to write file %s" % path, error)
        finally:
            os.close(descriptor)

    def remove_items(self, paths, dirs):
        for path in paths:
            try:
                if dirs:
                    os.rmdir(path)
                else:
                    os.unlink(path)
            except OSError as error:
                self.fail("create_remove_items_helper", "unable to remove %s %s"
                          % ("directory" if dirs else "file", path), error)

    def item_numbers(self, count):
        order = self.plan.rand_array
        for index in range(count):
            yield order[index] if order is not None else index

    def stat_items(self, top, base, dirs, name, count):
        for item_num in self.item_numbers(count):
            path = self.item_path(top, base, item_num, "dir" if dirs else "file", name)
            try:
                os.stat(path)
            except OSError as error:
                self.fail("mdtest_stat", "unable to stat %s %s"
                          % ("directory" if dirs else "file", path), error)

    def read_items(self, top, base, name, count):
        read_bytes = self.opts.read_bytes
        for item_num in self.item_numbers(count):
            path = self.item_path(top, base, item_num, "file", name)
            try:
                descriptor = os.open(path, os.O_RDONLY)
            except OSError as error:
                self.fail("mdtest_read", "unable to open file %s" % path, error)
            try:
                if read_bytes:
                    data = os.read(descriptor, read_bytes)
                    if len(data) != read_bytes:
                        self.fail("mdtest_read", "unable to read file %s" % path)
            except OSError as error:
                self.fail("mdtest_read", "unable to read file %s" % path, error)
            finally:
                os.close(descriptor)

    # -- phases ----------------------------------------------------------------

    def run_phases(self, testdir, dirs, table):
        """directory_test or file_test: create, stat, read, remove, timed between barriers.

        With ``-N`` the stat, read and remove phases work on the items of rank
        ``rank + k*N``; its directory (``-u``) and its names shift together.
        """
        plan, opts = self.plan, self.opts
        owners = [(self.rank + k * opts.nstride) % self.size for k in range(4)]
        names = ["mdtest.%d." % owner for owner in owners]
        if opts.unique_dir_per_task:
            tops = [os.path.join(testdir, "mdtest_tree.%d.0" % owner) for owner in owners]
        else:
            tops = [os.path.join(testdir, "mdtest_tree.0")] * 4
        bases = [self.tree_base(owner) for owner in owners]
        first = DIR_CREATE if dirs else FILE_CREATE
        items = plan.items
        stonewall = None
        self.wait()
        times = [time.monotonic()]
        if plan.create:
            paths = self.item_paths(tops[0], bases[0], dirs, names[0])
            deadline = None
            if not dirs and opts.stonewall_seconds > 0:
                deadline = times[0] + opts.stonewall_seconds
            done = self.create_items(paths, dirs, deadline=deadline)
            if deadline is not None:
                stonewall = self.stonewall_exchange(done, times[0], paths)
                items = stonewall["max"]
            self.throttle(times[-1], items)
        self.phase_end()
        times.append(time.monotonic())
        if plan.stat:
            self.stat_items(tops[1], bases[1], dirs, names[1], items)
            self.throttle(times[-1], items)
        self.phase_end()
        times.append(time.monotonic())
        if plan.read and not dirs:
            self.read_items(tops[2], bases[2], names[2], items)
            self.throttle(times[-1], items)
        self.phase_end()
        times.append(time.monotonic())
        if plan.remove:
            paths = self.item_paths(tops[3], bases[3], dirs, names[3])
            self.remove_items(itertools.islice(paths, items), dirs)
            self.throttle(times[-1], items)
        self.phase_end()
        times.append(time.monotonic())
        enabled = (plan.create, plan.stat, plan.read, plan.remove)
        for phase in range(4):
            if not enabled[phase]:
                continue
            elapsed = max(times[phase + 1] - times[phase], 1e-9)
            table["time"][first + phase] = elapsed
            table["rate"][first + phase] = items * self.size / elapsed
            table["items"][first + phase] = items * self.size
        if stonewall:
            table["stonewall_time"] = stonewall["time"]
            table["stonewall_items"] = stonewall["sum"]

    def throttle(self, started, items):
        """Hold this rank until all ranks' ``items`` each, at the plan's rate, would have taken since ``started``."""
        if not self.plan.rate_ops_s:
            return
        delay = started + items * self.size / self.plan.rate_ops_s - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def stonewall_exchange(self, done, started, paths):
        """updateStoneWallIterations: agree on the largest count and let every rank catch up (``paths``: the
        rank's creation order, past the ``done`` items it made)."""
        elapsed = time.monotonic() - started
        shared = self.results["stonewall"]
        with self.results["lock"]:
            shared[self.rank] = done
        self.barrier.wait()
        counts = [shared[r] for r in range(self.size)]
        most = max(counts)
        total = sum(counts)
        if self.rank == 0 and self.plan.items != total // self.size:
            sys.stdout.write("Continue stonewall hit min: %d max: %d avg: %.1f \n\n"
                             % (min(counts), most, total / float(self.size)))
            sys.stdout.flush()
        if done < most:
            self.create_items(itertools.islice(paths, most - done), False)
        self.barrier.wait()
        return {"time": elapsed, "sum": total, "max": most}

    def iteration(self, iteration, tasks):
        plan, opts = self.plan, self.opts
        table = {"rate": [0.0] * TABLE_SIZE, "time": [0.0] * TABLE_SIZE,
                 "items": [0] * TABLE_SIZE, "stonewall_time": 0.0, "stonewall_items": 0}
        testdir = os.path.join(self.results["path"], "test-dir.%d-0" % iteration)
        if self.rank == 0 and not os.path.exists(testdir):
            try:
                os.mkdir(testdir, DIRMODE)
            except OSError as error:
                self.fail("main", "Unable to create test directory %s" % testdir, error)
        if plan.create:
            self.barrier.wait()
            started = time.monotonic()
            if opts.unique_dir_per_task:
                self.create_tree(testdir, self.tree_base(self.rank))
            elif self.rank == 0:
                self.create_tree(testdir, "mdtest_tree")
            self.barrier.wait()
            elapsed = max(time.monotonic() - started, 1e-9)
            table["rate"][TREE_CREATE] = plan.num_dirs_in_tree / elapsed
            table["time"][TREE_CREATE] = elapsed
        else:
            self.barrier.wait()
        if self.rank < tasks:
            if plan.dirs:
                if opts.pre_delay:
                    time.sleep(opts.pre_delay)
                self.run_phases(testdir, True, table)
            if plan.files:
                if opts.pre_delay:
                    time.sleep(opts.pre_delay)
                self.run_phases(testdir, False, table)
        self.barrier.wait()
        if plan.remove:
            started = time.monotonic()
            if opts.unique_dir_per_task:
                self.remove_tree(testdir, self.tree_base(self.rank))
            elif self.rank == 0:
                self.remove_tree(testdir, "mdtest_tree")
            self.barrier.wait()
            elapsed = max(time.monotonic() - started, 1e-9)
            table["rate"][TREE_REMOVE] = plan.num_dirs_in_tree / elapsed
            table["time"][TREE_REMOVE] = elapsed
            if self.rank == 0 and os.path.exists(testdir):
                try:
                    os.rmdir(testdir)
                except OSError as error:
                    self.fail("main", "unable to remove directory %s" % testdir, error)
        return table


def _rank_main(plan, rank, barrier, results, queue):
    worker = Rank(plan, rank, barrier, results)
    tables = []
    try:
        for iteration in range(plan.opts.iterations):
            tables.append(worker.iteration(iteration, plan.size))
        queue.put((rank, tables, None))
    except Abort as error:
        barrier.abort()
        queue.put((rank, None, str(error)))
    except multiprocessing.BrokenBarrierError:
        queue.put((rank, None, "aborted"))
    except BaseException as error:  # a rank must always report, or the launcher waits forever
        barrier.abort()
        sys.stdout.write("%s: Process %d: FAILED in main, %s\n" % (timestamp(), rank, error))
        sys.stdout.flush()
        queue.put((rank, None, repr(error)))


# --------------------------------------------------------------------------
# the report


def _summary_33(out, plan, tables_by_rank, print_time):
    key = "time" if print_time else "rate"
    iterations = plan.opts.iterations
    out.write("\nSUMMARY %s: (of %d iterations)\n" % ("time" if print_time else "rate", iterations))
    out.write("   Operation                      Max            Min           Mean        Std Dev\n")
    out.write("   ---------                      ---            ---           ----        -------\n")
    start = 4 if plan.files and not plan.dirs else 0
    stop = 4 if plan.dirs and not plan.files else 8
    for phase in range(start, stop):
        if phase == DIR_READ:
            continue
        values = [tables_by_rank[r][j][key][phase]
                  for r in range(plan.size) for j in range(iterations)]
        _row(out, NAMES_33[phase], values, population=True)
    stonewall_time = sum(tables_by_rank[0][j]["stonewall_time"] for j in range(iterations))
    stonewall_items = sum(tables_by_rank[0][j]["stonewall_items"] for j in range(iterations))
    if stonewall_items:
        value = stonewall_time if print_time else stonewall_items / stonewall_time
        out.write("   File create (stonewall)   : %14s %14s %14.3f %14s\n" % ("NA", "NA", value, "NA"))
    for phase in (TREE_CREATE, TREE_REMOVE):
        values = [tables_by_rank[0][j][key][phase] for j in range(iterations)]
        _row(out, NAMES_33[phase], values, population=True)


def _row(out, label, values, population):
    mean = sum(values) / len(values)
    divisor = len(values) if population else len(values) - 1
    if divisor <= 0:
        deviation = 0.0
    else:
        deviation = math.sqrt(sum((mean - v) ** 2 for v in values) / divisor)
    out.write("   %s %14.3f %14.3f %14.3f %14.3f\n" % (label, max(values), min(values), mean,
                                                     deviation))


def _summary_40(out, plan, tables_by_rank, print_time):
    key = "time" if print_time else "rate"
    iterations, size = plan.opts.iterations, plan.size
    out.write("\nSUMMARY %s: (of %d iterations)\n" % ("time" if print_time else "rate", iterations))
    out.write("   Operation     " + "               " + " Max            Min           Mean        Std Dev\n")
    out.write("   ---------      " + "               ---            ---           ----        -------\n")
    start = 4 if plan.files and not plan.dirs else 0
    stop = 4 if plan.dirs and not plan.files else 8
    for phase in range(start, stop):
        if phase == DIR_READ:
            continue
        per_iteration = []
        for j in range(iterations):
            values = [tables_by_rank[r][j][key][phase] for r in range(size)]
            # 4.0 keeps per-rank rates and reports the slowest rank times the rank count.
            per_iteration.append(max(values) if print_time else min(values))
        _row_40(out, "   %-18s     " % NAMES_40[phase], per_iteration)
    for phase in (TREE_CREATE, TREE_REMOVE):
        values = [tables_by_rank[0][j][key][phase] for j in range(iterations)]
        _row_40(out, "   %-22s " % NAMES_40[phase], values)


def _row_40(out, prefix, values):
    count = len(values)
    mean = sum(values) / count
    deviation = 0.0 if count == 1 else math.sqrt(sum((mean - v) ** 2 for v in values) / (count - 1))
    out.write("%s%14.3f %14.3f %14.3f %14.3f\n" % (prefix, max(values), min(values), mean,
                                                   deviation))


def run(argv, program="mdtest", size=1, nodes=1, version="3.3.0", out=None, rate_ops_s=None):
    """Run mdtest with ``size`` ranks; returns the exit status.  ``rate_ops_s``: the ops/s of every phase, all
    ranks together, at most (the phases last at least their items over it)."""
    out = out or sys.stdout
    if version not in SUPPORTED_VERSIONS:
        version = "3.3.0"
    try:
        opts = parse_args(argv)
        plan = Plan(opts, size)
        plan.rate_ops_s = rate_ops_s
    except UsageError as error:
        out.write("%s: %s\n" % (program, error))
        return 1
    except Abort as error:
        out.write("%s: Process 0: FAILED in valid_tests, %s: Success\n" % (timestamp(), error))
        return 1
    command = program + "".join(" '%s'" % word for word in argv)
    out.write("-- started at %s --\n\n" % timestamp())
    out.write("mdtest-%s was launched with %d total task(s) on %d node(s)\n" % (version, size, nodes))
    out.write("Command line used: %s\n" % command)
    path = opts.path or os.getcwd()
    if not os.path.exists(path):
        try:
            os.mkdir(path, DIRMODE)
        except OSError as error:
            out.write("%s: Process 0: FAILED in main, Unable to create test directory path %s: %s\n"
                      % (timestamp(), path, os.strerror(error.errno)))
            return 1
    try:
        fs_line = filesystem_line(path)
    except OSError as error:
        out.write("%s: Process 0: FAILED in show_file_system_size, unable to stat file system %s: %s\n"
                  % (timestamp(), path, os.strerror(error.errno)))
        return 1
    out.write("Path: %s\n" % os.path.realpath(path))
    out.write(fs_line + "\n\n")
    out.write("Nodemap: %s\n" % "".join("1" if r < _ranks_on_first_node(size, nodes) else "0"
                                        for r in range(size)))
    if plan.rand_array is not None:
        out.write("random seed: %d\n" % plan.random_seed)
    out.write(plan.items_line(size) + "\n")
    out.flush()

    context = multiprocessing.get_context("fork")
    manager_lock = context.Lock()
    stonewall = context.Array("q", size)
    barrier = context.Barrier(size)
    queue = context.Queue()
    shared = {"path": os.path.abspath(path), "lock": manager_lock, "stonewall": stonewall}
    workers = []
    for rank in range(size):
        process = context.Process(target=_rank_main, args=(plan, rank, barrier, shared, queue),
                                  daemon=True)
        process.start()
        workers.append(process)
    tables_by_rank = {}
    failed = False
    for _ in range(size):
        rank, tables, error = queue.get()
        if error is not None:
            failed = True
        else:
            tables_by_rank[rank] = tables
    for process in workers:
        process.join(timeout=5)
        if process.is_alive():
            process.terminate()
    if failed:
        return 1
    if opts.print_rate_and_time:
        selections = (False, True)
    else:
        selections = (bool(opts.print_time),)
    for print_time in selections:
        if version == "3.3.0":
            _summary_33(out, plan, tables_by_rank, print_time)
        else:
            _summary_40(out, plan, tables_by_rank, print_time)
    out.write("-- finished at %s --\n\n" % timestamp())
    out.flush()
    return 0


def _ranks_on_first_node(size, nodes):
    # by-slot placement: the first node receives ceil(size / nodes) ranks
    nodes = max(1, min(nodes, size))
    return -(-size // nodes)
