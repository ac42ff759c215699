# -*- coding: utf-8 -*-
# Copyright (c) lustre.iokit contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The client-launch layer under the IOR and mdtest surveys: one client launches an MPI program over the clients.

What both surveys do the same way lives here, once:

- the launchers: ``mpirun --hostfile`` (the first N hosts, ``slots=P``,
  ``-np N*P``, so that by-slot placement puts exactly P tasks on each node;
  Open MPI's command line) or ``srun -N N -n N*P --ntasks-per-node P`` (with
  ``-p`` partition and ``-A`` account when given), inside the Slurm
  allocation the module runs in or one srun makes (``slurm_allocation:
  existing``), or in an allocation made for each launch: ``salloc -N N
  --ntasks-per-node P`` around the srun, or ``sbatch --wait`` of a job
  script that runs the srun, its output file (on the Lustre tree, where the
  batch host writes it) read back and removed; the job is written to the
  node state before it is submitted and cancelled (``scancel``) when the
  launch is stopped, so that neither a stopped nor a killed survey leaves a
  job behind;
- environment modules: the launch runs in a shell (``bash -l -c`` by
  default, where Lmod and Environment Modules define ``module``) that first
  does ``module load ...``, so that the tools are found in that shell;
- the options of the launch and of the sweep's counts, checked with messages
  that name the option;
- the marked test tree ``<mount>/<parent>/<prefix><run_id>``: the mount is
  refused unless ``lfs getname`` answers for it, the tree is written to the
  node state before it is made, carries a marker file naming the run, and is
  removed at the end only while the marker still names the run (a standalone
  cleanup does the same after a kill);
- on the module side, the launcher options' argument spec (documented by the
  ``lustre.iokit.client_launch`` doc fragment), the programs' lookup and the
  run from inspection to the envelope.

An engine subclasses ``ClientTreeSurvey`` with its sweep and its program's
command line; ``launch`` runs one program over a point's nodes. The command
lines themselves are in ``launch_commands.py``.

Target-side code: pure standard library and this collection's module_utils, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import shutil
import socket

from ansible_collections.lustre.iokit.plugins.module_utils import plan_estimate
from ansible_collections.lustre.iokit.plugins.module_utils import progress as progress_utils
from ansible_collections.lustre.iokit.plugins.module_utils import survey_module
from ansible_collections.lustre.iokit.plugins.module_utils.option_problem import OptionProblem
from ansible_collections.lustre.iokit.plugins.module_utils.runner import CommandResult
from ansible_collections.lustre.iokit.plugins.module_utils.engines.contract import NativeSurvey
from ansible_collections.lustre.iokit.plugins.module_utils.engines.errors import EngineError
from ansible_collections.lustre.iokit.plugins.module_utils.engines.ost import mount_fstype, parse_getname
from ansible_collections.lustre.iokit.plugins.module_utils.launch_commands import (
    DEFAULT_SHELL,
    current_user,
    default_node_counts,
    hostfile_text,
    job_already_gone,
    job_script_text,
    mpirun_argv,
    parse_job_id,
    salloc_argv,
    sbatch_argv,
    scancel_argv,
    srun_argv,
    with_modules,
)
from ansible_collections.lustre.iokit.plugins.module_utils.survey_args import common_option_problems

LAUNCHERS = ('mpirun', 'srun')
# Where srun runs: the allocation the module already runs in, or one made per launch by salloc or sbatch --wait.
ALLOCATIONS = ('existing', 'salloc', 'sbatch')
# The launch options every client survey takes, with their defaults (merged into the engine's DEFAULTS).
LAUNCH_DEFAULTS = {
    'launcher': 'mpirun',
    'slurm_allocation': 'existing',
    'partition': None,
    'account': None,
    'environment_modules': [],
}
# What a module name is made of (gcc/12.2.0, intel-oneapi-mpi/2021.9, hdf5/1.14+mpi): one word for the shell.
# The roles' preflights check the same pattern.
MODULE_NAME = re.compile(r'^[A-Za-z0-9._+/@:,=~%-]+\Z')


# --------------------------------------------------------------------------
# Options


def merge_defaults(defaults, options):
    """``defaults`` with the options that are set (None leaves the default)."""
    merged = dict(defaults)
    merged.update(dict((key, value) for key, value in (options or {}).items() if value is not None))
    return merged


def positive_list_problem(name, values):
    """The OptionProblem of option ``name`` unless ``values`` are increasing integers of at least 1; else None."""
    if not values:
        return OptionProblem(name, 'give at least one count')
    bad = [value for value in values if not isinstance(value, int) or isinstance(value, bool) or value < 1]
    if bad:
        return OptionProblem(name, 'every count must be an integer of at least 1', got=', '.join(str(v) for v in bad))
    if sorted(set(values)) != list(values):
        return OptionProblem(name, 'give the counts in increasing order without repeats',
                             got=', '.join(str(v) for v in values))
    return None


def bad_module_names(modules):
    return [name for name in modules or [] if not MODULE_NAME.match(str(name))]


def launch_option_problems(opts, host_count):
    """The problems of the options every client survey shares (``opts`` merged with the defaults).

    The counts (``tasks_per_node``, ``nodes`` against the hosts, ``repetitions``), ``stripe_count``, and the
    launch: ``launcher``, ``partition`` and ``account`` (srun only), ``slurm_allocation`` (salloc and sbatch with
    srun only), ``environment_modules``.
    """
    problems = []
    problem = positive_list_problem('tasks_per_node', opts['tasks_per_node'])
    if problem:
        problems.append(problem)
    if host_count < 1:
        problems.append(OptionProblem('hosts', 'give at least one client host name'))
    if opts['nodes'] is not None:
        problem = positive_list_problem('nodes', opts['nodes'])
        if problem:
            problems.append(problem)
        elif host_count >= 1 and opts['nodes'][-1] > host_count:
            problems.append(OptionProblem('nodes', '%d nodes asked but hosts lists only %d'
                                          % (opts['nodes'][-1], host_count)))
    if opts['repetitions'] < 1:
        problems.append(OptionProblem('repetitions', 'must be at least 1', got='%d' % opts['repetitions']))
    if opts['stripe_count'] is not None and (opts['stripe_count'] < -1 or opts['stripe_count'] == 0):
        problems.append(OptionProblem('stripe_count', 'must be -1 (every OST) or at least 1',
                                      got='%d' % opts['stripe_count']))
    problems.extend(_launcher_problems(opts))
    bad = bad_module_names(opts['environment_modules'])
    if bad:
        problems.append(OptionProblem('environment_modules',
                                      'module names are single words of letters, digits and ._+/@:,=~%-',
                                      got=', '.join(repr(name) for name in bad)))
    return problems


def _launcher_problems(opts):
    """``launcher``, and the Slurm settings that only srun takes."""
    problems = []
    if opts['launcher'] not in LAUNCHERS:
        problems.append(OptionProblem('launcher', 'must be mpirun or srun', got='%r' % (opts['launcher'],)))
    elif opts['launcher'] == 'mpirun' and (opts['partition'] or opts['account']):
        problems.append(OptionProblem(('partition', 'account'), 'Slurm settings need launcher srun'))
    allocation = opts.get('slurm_allocation', 'existing')
    if allocation not in ALLOCATIONS:
        problems.append(OptionProblem('slurm_allocation', 'must be existing, salloc or sbatch',
                                      got='%r' % (allocation,)))
    elif allocation != 'existing' and opts['launcher'] != 'srun':
        problems.append(OptionProblem('slurm_allocation', '%s makes a Slurm allocation for srun; it needs launcher '
                                      'srun, got %s' % (allocation, opts['launcher'])))
    return problems


# --------------------------------------------------------------------------
# The survey


def read_and_remove(path):
    """The text of ``path`` (empty when it is missing), then the file removed."""
    try:
        with open(path, 'rb') as handle:
            text = handle.read().decode('utf-8', 'replace')
    except (IOError, OSError):
        return ''
    remove_quietly(path)
    return text


def remove_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def read_marker(tree, marker):
    """The run id in ``tree``'s marker file, or None."""
    try:
        with open(os.path.join(tree, marker)) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


class ClientTreeSurvey(NativeSurvey):
    """One survey launched from this client over ``hosts``, working in its own marked tree on the Lustre mount.

    A subclass sets ``SURVEY`` (its name in the node state and in messages), ``MARKER``, ``TREE_PREFIX`` and
    ``DEFAULTS`` (its options, ``LAUNCH_DEFAULTS`` among them), ``PROGRESS_KEYS`` and ``PROGRESS_WEIGHT`` (how
    the progress log names and weighs a planned point), ``point_key`` (how an error names a point) and runs its
    sweep with ``launch`` in ``run()``, which yields each measured record (kept by ``record_done``). An adaptive sweep keeps its
    bookkeeping in ``sweeps`` (adaptive.InnerSweeps by step), whose ``skip`` reports each point it passes over
    as the server surveys' does: the module side has each follow the progress log (SurveyStart.follow_sweep).
    A resumed run gives it ``done_points``, the records earlier attempts of the run id finished by their
    ``resume_key`` (``record_point`` names their planned points): its sweep does not measure them again, and lists in
    ``withdrawn`` those its sweep, as it ends, no longer has (the module side takes them back out of the
    envelope, EnvelopeBuilder.withdraw_record).
    ``context`` (an EngineContext, contract.py) brings the run id, the node state and the runners: ``runner`` runs
    the measurements (under the deadline); ``control_runner`` the checks, the layout commands and the cleanup (no
    deadline).
    """

    SURVEY = None
    MARKER = None
    TREE_PREFIX = None
    DEFAULTS = LAUNCH_DEFAULTS
    # The keys of a planned point that the progress log shows (its ``current`` point)
    PROGRESS_KEYS = ()
    # The key of a planned point that weighs it for the ETA (e.g. its bytes); None: every point weighs the same
    PROGRESS_WEIGHT = None

    def __init__(self, context, mount_point, hosts, options=None,
                 parent=None, workdir='/tmp/lustre-iokit', mpirun='mpirun', srun='srun', lfs='lfs',
                 allow_run_as_root=False, launcher_extra_args=(), shell=DEFAULT_SHELL,
                 mountinfo_path='/proc/self/mountinfo', salloc='salloc', sbatch='sbatch', scancel='scancel'):
        self.context = context
        self.runner = context.runner
        self.control_runner = context.control_runner
        self.node_state = context.node_state
        self.run_id = context.run_id
        self.mount_point = mount_point.rstrip('/') or '/'
        self.hosts = list(hosts)
        self.opts = merge_defaults(self.DEFAULTS, options)
        self.parent = os.path.normpath(os.path.join(self.mount_point, parent)) if parent else self.mount_point
        self.workdir = workdir
        self.mpirun = mpirun
        self.srun = srun
        self.salloc = salloc
        self.sbatch = sbatch
        self.scancel = scancel
        self.lfs = lfs
        self.allow_run_as_root = allow_run_as_root
        self.launcher_extra_args = list(launcher_extra_args or ())
        self.shell = list(shell)
        self.mountinfo_path = mountinfo_path
        self.tree = os.path.join(self.parent, self.TREE_PREFIX + self.run_id)
        self.run_dir = os.path.join(workdir, self.run_id)
        self.fsname = None
        self.fstype = None
        self.errors = []
        self.aborted = None
        self.records = []
        self.raw_chunks = []
        self._tree_made = False
        self._hostfiles = []
        self._jobs = 0
        # The adaptive bookkeeping of each step of the sweep (axis -> adaptive.InnerSweeps); none by default
        self.sweeps = {}
        # The records earlier attempts of the run id finished (already in the envelope), by their resume_key:
        # their points are not measured again, their figures still count where the sweep chooses or stops.
        self.done_points = {}
        # Those of done_points that no longer belong to the sweep as it ends, each ``{'record', 'point',
        # 'reason'}``: the module side withdraws them from the envelope (EnvelopeBuilder.withdraw_record).
        self.withdrawn = []

    # -- what a subclass says --------------------------------------------------------------

    def point_key(self, point):
        """How an error names ``point`` (None for the survey as a whole)."""
        raise NotImplementedError

    def resume_key(self, point):
        """The key of ``done_points`` for a point or the record that measured it."""
        return tuple(point.get(key) for key in self.PROGRESS_KEYS)

    def make_point_directory(self, point):
        """Make and lay out the point's directory; its path, or None after an error (``layout_command``)."""
        raise NotImplementedError

    def record_point(self, record):
        """The planned point (as ``progress_points`` names it, without weight) that ``record`` measured."""
        return dict((key, record[key]) for key in self.PROGRESS_KEYS if key in record)

    # -- checks and plan -------------------------------------------------------------------

    def node_counts(self):
        return list(self.opts['nodes']) if self.opts['nodes'] is not None else default_node_counts(len(self.hosts))

    def inspect(self):
        """Check that the mount is Lustre and the tree's place is usable; raise EngineError naming the option."""
        self.fstype = mount_fstype(self.mount_point, self.mountinfo_path)
        result = self.control_runner.run([self.lfs, 'getname', self.mount_point])
        names = parse_getname(result.stdout) if result.rc == 0 else None
        if names is None:
            raise EngineError('mount_point: %s is not a Lustre client mount: lfs getname failed (rc %s): %s'
                              % (self.mount_point, result.rc, (result.stderr or result.stdout).strip()))
        self.fsname = names[0]
        inside = self.parent == self.mount_point or self.parent.startswith(self.mount_point.rstrip('/') + '/')
        if not inside:
            raise EngineError('directory: %s is not below mount_point %s' % (self.parent, self.mount_point))
        if not os.path.isdir(self.parent):
            raise EngineError('directory: %s does not exist on the Lustre mount; create it first' % self.parent)
        if os.path.lexists(self.tree) and read_marker(self.tree, self.MARKER) != self.run_id:
            raise EngineError('run_id: %s exists and does not carry the marker of run %s; it is not ours, '
                              'choose another run_id or remove it' % (self.tree, self.run_id))

    def progress_points(self, plan):
        """The points of ``plan`` the sweep runs, in order, as the progress log counts them (names and weights)."""
        return progress_utils.planned_points(plan['points'], self.PROGRESS_KEYS, self.PROGRESS_WEIGHT)

    def plan_common(self):
        """The plan's keys every client survey has: where, over which hosts, how launched."""
        return {
            'mount_point': self.mount_point,
            'fsname': self.fsname,
            'tree': self.tree,
            'marker': os.path.join(self.tree, self.MARKER),
            'hosts': self.hosts,
            'launcher': self.opts['launcher'],
            'slurm_allocation': self.allocation(),
            'environment_modules': list(self.opts['environment_modules']),
        }

    def hostfile_path(self, nodes, slots):
        return os.path.join(self.run_dir, 'hostfile-%dx%d' % (nodes, slots))

    def allocation(self):
        """``existing``, ``salloc`` or ``sbatch``: where srun runs (always ``existing`` for mpirun)."""
        if self.opts['launcher'] != 'srun':
            return 'existing'
        return self.opts.get('slurm_allocation') or 'existing'

    def job_files(self, number):
        """(job name, script, output) of the ``number``-th job of this run: the name is unique to the run and the
        launch, the script stays on this host (sbatch reads it here), the output goes to the tree on the Lustre
        mount, which the batch host of the job writes."""
        name = 'lustre-iokit-%s-%s-%d' % (self.SURVEY, self.run_id, number)
        return name, os.path.join(self.run_dir, name + '.sh'), os.path.join(self.tree, name + '.out')

    def job_command(self, nodes, tasks_per_node, program):
        """What runs in the job's shell: srun of ``program`` (in the module shell when modules are set)."""
        partition = account = None
        if self.allocation() == 'existing':
            # a made allocation has the partition and account; srun inherits them
            partition, account = self.opts['partition'], self.opts['account']
        argv = srun_argv(self.srun, nodes, tasks_per_node, program, partition, account, self.launcher_extra_args)
        return with_modules(argv, self.opts['environment_modules'], self.shell)

    def launch_command(self, nodes, tasks_per_node, program, job=1):
        """The whole command that starts ``program`` as ``tasks_per_node`` tasks on each of ``nodes`` nodes (with
        salloc or sbatch: in the ``job``-th job of the run)."""
        if self.opts['launcher'] != 'srun':
            argv = mpirun_argv(self.mpirun, self.hostfile_path(nodes, tasks_per_node), nodes * tasks_per_node,
                               program, self.allow_run_as_root, self.launcher_extra_args)
            return with_modules(argv, self.opts['environment_modules'], self.shell)
        command = self.job_command(nodes, tasks_per_node, program)
        allocation = self.allocation()
        if allocation == 'existing':
            return command
        name, script, output = self.job_files(job)
        if allocation == 'salloc':
            return salloc_argv(self.salloc, nodes, tasks_per_node, name, command, self.opts['partition'],
                               self.opts['account'])
        return sbatch_argv(self.sbatch, nodes, tasks_per_node, name, output, script, self.opts['partition'],
                           self.opts['account'])

    # -- setup -----------------------------------------------------------------------------

    def setup(self):
        """Create the run directory and the marked tree (written to the node state first)."""
        if not os.path.isdir(self.run_dir):
            os.makedirs(self.run_dir)
        self.node_state.record('paths', self.run_id, path=self.tree, mount_point=self.mount_point,
                               survey=self.SURVEY, marker=self.MARKER)
        self._tree_made = True
        if os.path.lexists(self.tree):
            # the same run id after an abort: the marker says the tree is ours; start afresh
            shutil.rmtree(self.tree)
        os.mkdir(self.tree)
        with open(os.path.join(self.tree, self.MARKER), 'w') as handle:
            handle.write(self.run_id + '\n')

    def prepare_point(self, point):
        """The point's directory (``make_point_directory``), or None with an error naming the point."""
        try:
            return self.make_point_directory(point)
        except OSError as exc:
            self.error(point, 'cannot create the point directory: %s' % exc)
            return None

    def layout_command(self, argv, point):
        """Run an ``lfs`` layout command; False with an error naming the point when it fails."""
        result = self.control_runner.run(argv)
        if result.rc != 0:
            detail = (result.stderr or result.stdout).strip()
            self.error(point, '%s failed (rc %s): %s' % (' '.join(argv[:2]), result.rc, detail))
            return False
        return True

    # -- running ---------------------------------------------------------------------------

    def error(self, point, message):
        self.errors.append({'point': None if point is None else self.point_key(point), 'message': message})

    def record_done(self, record):
        """The record of a measured point, kept in ``records`` (the ones this attempt measured)."""
        self.records.append(record)

    def stop(self, point, what):
        """The run stops here (deadline or signal): ``what`` and the reason become the point's error."""
        self.aborted = self.runner.stop_reason or 'stopped'
        self.error(point, '%s: %s' % (what, self.aborted))

    def launch(self, point, nodes, tasks_per_node, program, what=None):
        """Run ``program`` over the first ``nodes`` hosts, ``tasks_per_node`` each; the result, or None when stopped.

        With mpirun the hostfile is written first (and removed by ``teardown``). The command and its output go to
        the raw output. A run cut by the deadline or a signal stops the survey with the error ``<what>
        interrupted`` (``what`` defaults to the survey's name).
        """
        if self.opts['launcher'] == 'mpirun':
            path = self.hostfile_path(nodes, tasks_per_node)
            with open(path, 'w') as handle:
                handle.write(hostfile_text(self.hosts[:nodes], tasks_per_node))
            if path not in self._hostfiles:
                self._hostfiles.append(path)
        if self.allocation() == 'existing':
            argv = self.launch_command(nodes, tasks_per_node, program)
            result = self.runner.run(argv)
            self.raw_chunks.append('# %s\n%s%s' % (' '.join(argv), result.stdout, result.stderr))
        else:
            result = self.launch_in_job(point, nodes, tasks_per_node, program)
        if result.timed_out or self.runner.expired():
            self.stop(point, '%s interrupted' % (what or self.SURVEY))
            return None
        return result

    def launch_in_job(self, point, nodes, tasks_per_node, program):
        """Run the srun of ``program`` in a Slurm job of its own (salloc, or sbatch --wait); the launch's result.

        The job is written to the node state (name, output file, how to cancel it) before it is submitted; with
        sbatch the script is written first and the output file is read back into the result's stdout, then both
        are removed. A launch that did not end by itself (deadline, SIGTERM) has its job cancelled here, by the id
        the launcher printed, else by its name; the entry stays for the cleanup only when that fails.
        """
        self._jobs += 1
        allocation = self.allocation()
        name, script, output = self.job_files(self._jobs)
        argv = self.launch_command(nodes, tasks_per_node, program, self._jobs)
        entry = dict(name=name, survey=self.SURVEY, allocation=allocation, scancel=self.scancel, user=current_user())
        if allocation == 'sbatch':
            entry.update(output=output, script=script, tree=self.tree, marker=self.MARKER)
        self.node_state.record('slurm_jobs', self.run_id, **entry)
        ended = False
        result = None
        try:
            if allocation == 'sbatch':
                with open(script, 'w') as handle:
                    handle.write(job_script_text(self.job_command(nodes, tasks_per_node, program)))
                os.chmod(script, 0o700)
            result = self.runner.run(argv)
            ended = not (result.timed_out or self.runner.expired())
        finally:
            job_id = parse_job_id(result.stdout, result.stderr, allocation) if result is not None else None
            cancelled = ended or self.cancel_job(point, name, job_id)
            job_output = ''
            if allocation == 'sbatch':
                job_output = read_and_remove(output) if cancelled else ''
                remove_quietly(script)
            if cancelled:
                self.node_state.forget('slurm_jobs', name)
            elif job_id:
                # the cleanup cancels it by this id
                self.node_state.record('slurm_jobs', self.run_id, **dict(entry, job_id=job_id))
        if allocation == 'sbatch':
            job_script = ' '.join(self.job_command(nodes, tasks_per_node, program))
            shown = '%s  # job script: %s' % (' '.join(argv), job_script)
            # the job's output is what the program printed; sbatch's own lines (the job id, errors) go to stderr
            result = CommandResult(argv, result.rc, job_output, result.stdout + result.stderr, result.elapsed_s,
                                   result.timed_out)
        else:
            shown = ' '.join(argv)
        self.raw_chunks.append('# %s\n%s%s' % (shown, result.stdout, result.stderr))
        return result

    def cancel_job(self, point, name, job_id):
        """``scancel`` the job of a stopped launch (on the control runner: it runs after the deadline); True when
        no job is left."""
        argv = scancel_argv(self.scancel, job_id, name, current_user())
        result = self.control_runner.run(argv)
        if result.rc == 0 or job_already_gone(result):
            return True
        self.error(point, 'cannot cancel Slurm job %s (%s): %s failed (rc %s): %s; the cleanup cancels it' % (
            job_id or '?', name, ' '.join(argv), result.rc, (result.stderr or result.stdout).strip()))
        return False

    def launch_failed(self, point, result, detail=None):
        """The error of a launch that ran but did not measure: the launcher, the program, rc and what it said."""
        detail = detail if detail else (result.stderr + result.stdout).strip()
        self.error(point, '%s %s failed (rc %s): %s' % (
            self.opts['launcher'], self.SURVEY, result.rc, detail[-2000:]))

    # -- cleanup ------------------------------------------------------------------------------

    def teardown(self, control_runner=None):
        """Remove the tree (only while it carries our marker) and the hostfiles; returns the problems left.

        The tree is removed by Python, not a command: ``control_runner`` is not needed."""
        problems = []
        for path in self._hostfiles:
            try:
                os.unlink(path)
            except OSError:
                pass
        self._hostfiles = []
        if not self._tree_made:
            return problems
        if os.path.lexists(self.tree):
            if read_marker(self.tree, self.MARKER) != self.run_id:
                problems.append('%s no longer carries the marker of run %s; left in place' % (self.tree, self.run_id))
                return problems
            try:
                shutil.rmtree(self.tree)
            except OSError as exc:
                problems.append('cannot remove %s: %s' % (self.tree, exc))
                return problems
        self.node_state.forget('paths', self.tree)
        self._tree_made = False
        return problems

    def raw_text(self):
        return '\n'.join(self.raw_chunks)


# --------------------------------------------------------------------------
# The module side


def launch_argument_spec():
    """The launcher options of a client survey module (doc fragment ``lustre.iokit.client_launch``) and
    ``force_rerun`` (``lustre.iokit.resume``)."""
    return dict(
        mount_point=dict(type='path', required=True),
        directory=dict(type='str'),
        hosts=dict(type='list', elements='str', default=['localhost']),
        launcher=dict(type='str', choices=list(LAUNCHERS), default=LAUNCH_DEFAULTS['launcher']),
        slurm_allocation=dict(type='str', choices=list(ALLOCATIONS), default=LAUNCH_DEFAULTS['slurm_allocation']),
        partition=dict(type='str'),
        account=dict(type='str'),
        environment_modules=dict(type='list', elements='str', default=[]),
        module_shell=dict(type='list', elements='str', default=list(DEFAULT_SHELL)),
        mpirun=dict(type='str', default='mpirun'),
        srun=dict(type='str', default='srun'),
        salloc=dict(type='str', default='salloc'),
        sbatch=dict(type='str', default='sbatch'),
        scancel=dict(type='str', default='scancel'),
        launcher_extra_args=dict(type='list', elements='str', default=[]),
        allow_run_as_root=dict(type='bool', default=False),
        # a rerun of the run id resumes (doc fragment ``lustre.iokit.resume``)
        **progress_utils.resume_argument_spec()
    )


# the launch options that shape the measurement (the envelope's parameters, with the survey's own)
LAUNCH_PARAMETERS = ('launcher', 'slurm_allocation', 'partition', 'account', 'environment_modules')


def engine_options(params, names):
    return dict((name, params[name]) for name in names)


def module_option_problems(params, engine_problems=()):
    """``engine_problems``, then the module's own problems of the launch options and of the survey_common ones, each
    an OptionProblem."""
    problems = list(engine_problems)
    directory = params['directory']
    if directory and (os.path.isabs(directory) or '..' in directory.split('/')):
        problems.append(OptionProblem('directory', 'give a path relative to {mount_point} without ".."',
                                      got=directory, mentions='mount_point'))
    return problems + common_option_problems(params)


def run_as_root_problems(params, euid=None):
    """The launch's problem when the module runs as root (``euid``, else this process's) and Open MPI would refuse
    it. Who runs the module is the node's to say, so this is not among the options' problems the preflight checks
    on the controller."""
    euid = os.geteuid() if euid is None else euid
    if euid == 0 and params['launcher'] == 'mpirun' and not params['allow_run_as_root']:
        return [OptionProblem('allow_run_as_root', 'the module runs as root and Open MPI refuses root without '
                              '--allow-run-as-root; set {allow_run_as_root}=true or run as another user',
                              mentions='allow_run_as_root')]
    return []


def resolve(module, name, option, required=True):
    """The program's path: a path must be executable, a name is looked up in PATH (left to the shell if not
    ``required``)."""
    if os.sep in name:
        if not os.access(name, os.X_OK):
            module.fail_json(msg='%s: %s is not an executable file' % (option, name))
        return name
    path = module.get_bin_path(name)
    if path is None:
        if not required:
            return name
        module.fail_json(msg='%s: %s is not in PATH on %s' % (option, name, socket.gethostname()))
    return path


def _resolve_programs(module, program_option):
    """(launcher, program, Slurm programs) paths. With environment modules the tools may exist only after
    ``module load``: a name not found now is left for the shell to find then. salloc or sbatch, and scancel, run
    before any module is loaded: they must be found here."""
    params = module.params
    required = not params['environment_modules']
    launcher = resolve(module, params[params['launcher']], params['launcher'], required)
    program = resolve(module, params[program_option], program_option, required)
    slurm = {}
    allocation = params['slurm_allocation'] if params['launcher'] == 'srun' else 'existing'
    if allocation != 'existing':
        slurm[allocation] = resolve(module, params[allocation], allocation)
        slurm['scancel'] = resolve(module, params['scancel'], 'scancel')
    return launcher, program, slurm


def progress_plan(survey, plan):
    """What the run's progress log starts from (SurveyStart.start_run): the points of ``plan`` the sweep runs
    (``survey.progress_points``) and the plan's estimated duration (None when the survey has no rate to assume)."""
    return survey.progress_points(plan), plan_estimate.estimate(survey.SURVEY, plan)['estimated_duration_s']


def _run(survey, builder, raw_path):
    """Run ``survey`` through the engine contract (survey_module.run_native): each record goes into the envelope as
    its point ends (the builder tells the run's progress log); then the launcher's output goes to ``raw_path``.
    True when this attempt measured a point."""
    records, unused_raw_files = survey_module.run_native(builder, survey, survey.control_runner)
    if survey.raw_chunks:
        with open(raw_path, 'w') as handle:
            handle.write(survey.raw_text())
    return bool(records)


def run_module(module, problems, survey_class, program_option, parameter_names, engine_option_names,
               runner_class, recording_runner_class, plan_lines):
    """A client survey module's whole run once its arguments are parsed: fail on ``problems`` (the module's
    ``option_problems``) and on running as root when Open MPI would refuse it, find the launcher
    and the program (option ``program_option``), start the survey (the runner classes come from the calling
    module, so that its tests can replace them there), inspect, plan (check mode ends there, with the plan's
    ``lines`` from ``plan_lines(params, plan)``), run, and exit with the envelope. The environment names the
    launcher and the program (under the survey's name) that ran.
    """
    params = module.params
    survey_module.fail_on_problems(module, list(problems) + run_as_root_problems(params))
    launcher, program, slurm = _resolve_programs(module, program_option)
    name = survey_class.SURVEY
    # checks, layouts and the tree's removal run on the control runner: the removal still runs after a timeout
    start = survey_module.start_survey(module, name, parameter_names, runner_class, recording_runner_class)
    survey = survey_class(start.context, params['mount_point'],
                          params['hosts'], engine_options(params, engine_option_names), program,
                          parent=params['directory'], workdir=params['workdir'],
                          mpirun=launcher if params['launcher'] == 'mpirun' else params['mpirun'],
                          srun=launcher if params['launcher'] == 'srun' else params['srun'],
                          allow_run_as_root=params['allow_run_as_root'],
                          launcher_extra_args=params['launcher_extra_args'], shell=params['module_shell'],
                          salloc=slurm.get('salloc', params['salloc']), sbatch=slurm.get('sbatch', params['sbatch']),
                          scancel=slurm.get('scancel', params['scancel']))
    builder = start.builder
    try:
        survey.inspect()
    except EngineError as exc:
        module.fail_json(msg=str(exc))
    environment = dict(lustre_version=start.lctl.version(), kernel=os.uname()[2], fsname=survey.fsname,
                       mount_fstype=survey.fstype, launcher=launcher)
    if survey.allocation() != 'existing':
        environment['slurm_allocation'] = slurm[survey.allocation()]
    environment[name] = program
    builder.set_environment(**environment)
    plan = survey.plan()
    if module.check_mode:
        plan['lines'] = plan_lines(params, plan)
        survey_module.exit_with_envelope(module, builder, name, True, plan=plan)
    # The run's progress log counts the plan's points (weighed as the survey says); the plan's estimate gives the
    # ETA until the first point ends, then the rate measured so far.
    # A rerun of the run id resumes: the points its earlier attempts finished go into the envelope, the sweep skips
    # them (force_rerun starts over).
    run_dir = start.start_run(*progress_plan(survey, plan), record_point=survey.record_point)
    survey.done_points = dict((survey.resume_key(record), record) for record in start.done_records)
    # each point an adaptive step passes over leaves the progress log's total, as in the server surveys
    for axis in sorted(survey.sweeps):
        start.follow_sweep(survey.sweeps[axis])
    raw_path = os.path.join(run_dir, '%s.out' % name)
    changed = _run(survey, builder, raw_path)
    builder.set_raw_output(raw_path if os.path.exists(raw_path) else None)
    survey_module.exit_with_envelope(module, builder, name, changed, plan=plan)
