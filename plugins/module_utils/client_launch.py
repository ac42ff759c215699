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
  allocation the module runs in or one srun makes;
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
command line; ``launch`` runs one program over a point's nodes.

Target-side code: pure standard library and this collection's module_utils, no Ansible imports, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import shutil
import socket

try:
    from shlex import quote as shell_quote
except ImportError:  # pragma: no cover - Python 2 only
    from pipes import quote as shell_quote

from ansible_collections.lustre.iokit.plugins.module_utils import survey_module
from ansible_collections.lustre.iokit.plugins.module_utils.engines.ost import mount_fstype, parse_getname
from ansible_collections.lustre.iokit.plugins.module_utils.survey_args import common_option_problems

LAUNCHERS = ('mpirun', 'srun')
# A login shell: where Lmod and Environment Modules define the ``module`` shell function.
DEFAULT_SHELL = ('/bin/bash', '-l', '-c')
# The launch options every client survey takes, with their defaults (merged into the engine's DEFAULTS).
LAUNCH_DEFAULTS = {
    'launcher': 'mpirun',
    'partition': None,
    'account': None,
    'environment_modules': [],
}
# What a module name is made of (gcc/12.2.0, intel-oneapi-mpi/2021.9, hdf5/1.14+mpi): one word for the shell.
# The roles' preflights check the same pattern.
MODULE_NAME = re.compile(r'^[A-Za-z0-9._+/@:,=~%-]+\Z')


class EngineError(Exception):
    """A refusal before anything is created (not Lustre, a tree that is not ours, a bad parent)."""


# --------------------------------------------------------------------------
# Commands


def hostfile_text(hosts, slots):
    return ''.join('%s slots=%d\n' % (host, slots) for host in hosts)


def mpirun_argv(mpirun, hostfile, tasks, program, allow_run_as_root=False, extra_args=()):
    argv = [mpirun, '--hostfile', hostfile, '-np', str(tasks)]
    if allow_run_as_root:
        argv.append('--allow-run-as-root')
    return argv + list(extra_args) + list(program)


def srun_argv(srun, nodes, tasks_per_node, program, partition=None, account=None, extra_args=()):
    argv = [srun, '-N', str(nodes), '-n', str(nodes * tasks_per_node), '--ntasks-per-node', str(tasks_per_node)]
    if partition:
        argv += ['-p', partition]
    if account:
        argv += ['-A', account]
    return argv + list(extra_args) + list(program)


def with_modules(argv, modules, shell=DEFAULT_SHELL):
    """Run ``argv`` in a shell that loads the environment modules first (``argv`` itself without modules).

    ``module`` is a shell function that Lmod and Environment Modules define in
    login shells, so the default shell is ``bash -l -c``; a site whose
    non-login shells have it can pass another. The launcher replaces the
    shell (``exec``), so that stopping the launch stops the launcher.
    """
    if not modules:
        return list(argv)
    names = ' '.join(shell_quote(str(name)) for name in modules)
    script = 'module load %s && exec %s' % (names, ' '.join(shell_quote(str(word)) for word in argv))
    return list(shell) + [script]


def default_node_counts(host_count):
    """1, 2, 4, ... below ``host_count``, then ``host_count`` itself."""
    counts = []
    count = 1
    while count < host_count:
        counts.append(count)
        count *= 2
    if host_count >= 1:
        counts.append(host_count)
    return counts


# --------------------------------------------------------------------------
# Options


def merge_defaults(defaults, options):
    """``defaults`` with the options that are set (None leaves the default)."""
    merged = dict(defaults)
    merged.update(dict((key, value) for key, value in (options or {}).items() if value is not None))
    return merged


def positive_list_problem(name, values):
    """A message naming ``name`` unless ``values`` are increasing integers of at least 1; else None."""
    if not values:
        return '%s: give at least one count' % name
    bad = [value for value in values if not isinstance(value, int) or isinstance(value, bool) or value < 1]
    if bad:
        return '%s: every count must be an integer of at least 1, got %s' % (name, ', '.join(str(v) for v in bad))
    if sorted(set(values)) != list(values):
        return '%s: give the counts in increasing order without repeats, got %s' % (
            name, ', '.join(str(v) for v in values))
    return None


def bad_module_names(modules):
    return [name for name in modules or [] if not MODULE_NAME.match(str(name))]


def launch_option_problems(opts, host_count):
    """The problems of the options every client survey shares (``opts`` merged with the defaults).

    The counts (``tasks_per_node``, ``nodes`` against the hosts, ``iterations``), ``stripe_count``, and the
    launch: ``launcher``, ``partition`` and ``account`` (srun only), ``environment_modules``.
    """
    problems = []
    problem = positive_list_problem('tasks_per_node', opts['tasks_per_node'])
    if problem:
        problems.append(problem)
    if host_count < 1:
        problems.append('hosts: give at least one client host name')
    if opts['nodes'] is not None:
        problem = positive_list_problem('nodes', opts['nodes'])
        if problem:
            problems.append(problem)
        elif host_count >= 1 and opts['nodes'][-1] > host_count:
            problems.append('nodes: %d nodes asked but hosts lists only %d' % (opts['nodes'][-1], host_count))
    if opts['iterations'] < 1:
        problems.append('iterations: must be at least 1, got %d' % opts['iterations'])
    if opts['stripe_count'] is not None and (opts['stripe_count'] < -1 or opts['stripe_count'] == 0):
        problems.append('stripe_count: must be -1 (every OST) or at least 1, got %d' % opts['stripe_count'])
    if opts['launcher'] not in LAUNCHERS:
        problems.append('launcher: must be mpirun or srun, got %r' % (opts['launcher'],))
    elif opts['launcher'] == 'mpirun' and (opts['partition'] or opts['account']):
        problems.append('partition, account: Slurm settings need launcher srun')
    bad = bad_module_names(opts['environment_modules'])
    if bad:
        problems.append('environment_modules: module names are single words of letters, digits and ._+/@:,=~%%-, got %s'
                        % ', '.join(repr(name) for name in bad))
    return problems


# --------------------------------------------------------------------------
# The survey


def read_marker(tree, marker):
    """The run id in ``tree``'s marker file, or None."""
    try:
        with open(os.path.join(tree, marker)) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


class ClientTreeSurvey:
    """One survey launched from this client over ``hosts``, working in its own marked tree on the Lustre mount.

    A subclass sets ``SURVEY`` (its name in the node state and in messages), ``MARKER``, ``TREE_PREFIX`` and
    ``DEFAULTS`` (its options, ``LAUNCH_DEFAULTS`` among them), ``point_key`` (how an error names a point) and
    runs its sweep with ``launch``. ``runner`` runs the measurements (under the deadline); ``control_runner``
    the checks, the layout commands and the cleanup (no deadline).
    """

    SURVEY = None
    MARKER = None
    TREE_PREFIX = None
    DEFAULTS = LAUNCH_DEFAULTS

    def __init__(self, runner, control_runner, node_state, run_id, mount_point, hosts, options=None,
                 parent=None, workdir='/tmp/lustre-iokit', mpirun='mpirun', srun='srun', lfs='lfs',
                 allow_run_as_root=False, launcher_extra_args=(), shell=DEFAULT_SHELL,
                 mountinfo_path='/proc/self/mountinfo'):
        self.runner = runner
        self.control_runner = control_runner
        self.node_state = node_state
        self.run_id = run_id
        self.mount_point = mount_point.rstrip('/') or '/'
        self.hosts = list(hosts)
        self.opts = merge_defaults(self.DEFAULTS, options)
        self.parent = os.path.normpath(os.path.join(self.mount_point, parent)) if parent else self.mount_point
        self.workdir = workdir
        self.mpirun = mpirun
        self.srun = srun
        self.lfs = lfs
        self.allow_run_as_root = allow_run_as_root
        self.launcher_extra_args = list(launcher_extra_args or ())
        self.shell = list(shell)
        self.mountinfo_path = mountinfo_path
        self.tree = os.path.join(self.parent, self.TREE_PREFIX + run_id)
        self.run_dir = os.path.join(workdir, run_id)
        self.fsname = None
        self.fstype = None
        self.errors = []
        self.aborted = None
        self.records = []
        self.raw_chunks = []
        self._tree_made = False
        self._hostfiles = []

    # -- what a subclass says --------------------------------------------------------------

    def point_key(self, point):
        """How an error names ``point`` (None for the survey as a whole)."""
        raise NotImplementedError

    def make_point_directory(self, point):
        """Make and lay out the point's directory; its path, or None after an error (``layout_command``)."""
        raise NotImplementedError

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

    def plan_common(self):
        """The plan's keys every client survey has: where, over which hosts, how launched."""
        return {
            'mount_point': self.mount_point,
            'fsname': self.fsname,
            'tree': self.tree,
            'marker': os.path.join(self.tree, self.MARKER),
            'hosts': self.hosts,
            'launcher': self.opts['launcher'],
            'environment_modules': list(self.opts['environment_modules']),
        }

    def hostfile_path(self, nodes, slots):
        return os.path.join(self.run_dir, 'hostfile-%dx%d' % (nodes, slots))

    def launch_command(self, nodes, tasks_per_node, program):
        """The whole command that starts ``program`` as ``tasks_per_node`` tasks on each of ``nodes`` nodes."""
        if self.opts['launcher'] == 'srun':
            argv = srun_argv(self.srun, nodes, tasks_per_node, program, self.opts['partition'], self.opts['account'],
                             self.launcher_extra_args)
        else:
            argv = mpirun_argv(self.mpirun, self.hostfile_path(nodes, tasks_per_node), nodes * tasks_per_node,
                               program, self.allow_run_as_root, self.launcher_extra_args)
        return with_modules(argv, self.opts['environment_modules'], self.shell)

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
        argv = self.launch_command(nodes, tasks_per_node, program)
        result = self.runner.run(argv)
        self.raw_chunks.append('# %s\n%s%s' % (' '.join(argv), result.stdout, result.stderr))
        if result.timed_out or self.runner.expired():
            self.stop(point, '%s interrupted' % (what or self.SURVEY))
            return None
        return result

    def launch_failed(self, point, result, detail=None):
        """The error of a launch that ran but did not measure: the launcher, the program, rc and what it said."""
        detail = detail if detail else (result.stderr + result.stdout).strip()
        self.error(point, '%s %s failed (rc %s): %s' % (
            self.opts['launcher'], self.SURVEY, result.rc, detail[-2000:]))

    # -- cleanup ------------------------------------------------------------------------------

    def teardown(self):
        """Remove the tree (only while it carries our marker) and the hostfiles; returns the problems left."""
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
    """The launcher options of a client survey module (doc fragment ``lustre.iokit.client_launch``)."""
    return dict(
        mount_point=dict(type='path', required=True),
        directory=dict(type='str'),
        hosts=dict(type='list', elements='str', default=['localhost']),
        launcher=dict(type='str', choices=list(LAUNCHERS), default=LAUNCH_DEFAULTS['launcher']),
        partition=dict(type='str'),
        account=dict(type='str'),
        environment_modules=dict(type='list', elements='str', default=[]),
        module_shell=dict(type='list', elements='str', default=list(DEFAULT_SHELL)),
        mpirun=dict(type='str', default='mpirun'),
        srun=dict(type='str', default='srun'),
        launcher_extra_args=dict(type='list', elements='str', default=[]),
        allow_run_as_root=dict(type='bool', default=False),
    )


# the launch options that shape the measurement (the envelope's parameters, with the survey's own)
LAUNCH_PARAMETERS = ('launcher', 'partition', 'account', 'environment_modules')


def engine_options(params, names):
    return dict((name, params[name]) for name in names)


def module_option_problems(params, engine_problems=(), euid=None):
    """``engine_problems``, then the module's own problems of the launch options and of the survey_common ones, each
    naming the option."""
    problems = list(engine_problems)
    directory = params['directory']
    if directory and (os.path.isabs(directory) or '..' in directory.split('/')):
        problems.append('directory: give a path relative to mount_point without "..", got %s' % directory)
    euid = os.geteuid() if euid is None else euid
    if euid == 0 and params['launcher'] == 'mpirun' and not params['allow_run_as_root']:
        problems.append('allow_run_as_root: the module runs as root and Open MPI refuses root without '
                        '--allow-run-as-root; set allow_run_as_root=true or run as another user')
    return problems + common_option_problems(params)


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
    """(launcher, program) paths. With environment modules the tools may exist only after ``module load``: a name
    not found now is left for the shell to find then."""
    params = module.params
    required = not params['environment_modules']
    launcher = resolve(module, params[params['launcher']], params['launcher'], required)
    program = resolve(module, params[program_option], program_option, required)
    return launcher, program


def _run(survey, builder, raw_path):
    try:
        survey.setup()
        survey.run()
    except (EngineError, OSError) as exc:
        builder.add_error(str(exc))
    finally:
        for problem in survey.teardown():
            builder.add_error('cleanup: %s' % problem)
        if survey.raw_chunks:
            with open(raw_path, 'w') as handle:
                handle.write(survey.raw_text())
    for record in survey.records:
        builder.add_record(record)
    survey_module.add_survey_outcome(builder, survey)
    return bool(survey.records)


def run_module(module, problems, survey_class, program_option, parameter_names, engine_option_names,
               runner_class, recording_runner_class):
    """A client survey module's whole run once its arguments are parsed: fail on ``problems``, find the launcher
    and the program (option ``program_option``), start the survey (the runner classes come from the calling
    module, so that its tests can replace them there), inspect, plan (check mode ends there), run, and exit with
    the envelope. The environment names the launcher and the program (under the survey's name) that ran.
    """
    params = module.params
    survey_module.fail_on_problems(module, problems)
    launcher, program = _resolve_programs(module, program_option)
    name = survey_class.SURVEY
    # checks, layouts and the tree's removal run on the control runner: the removal still runs after a timeout
    start = survey_module.start_survey(module, name, parameter_names, runner_class, recording_runner_class)
    survey = survey_class(start.runner, start.control_runner, start.node_state, start.run_id, params['mount_point'],
                          params['hosts'], engine_options(params, engine_option_names), program,
                          parent=params['directory'], workdir=params['workdir'],
                          mpirun=launcher if params['launcher'] == 'mpirun' else params['mpirun'],
                          srun=launcher if params['launcher'] == 'srun' else params['srun'],
                          allow_run_as_root=params['allow_run_as_root'],
                          launcher_extra_args=params['launcher_extra_args'], shell=params['module_shell'])
    builder = start.builder
    try:
        survey.inspect()
    except EngineError as exc:
        module.fail_json(msg=str(exc))
    environment = dict(lustre_version=start.lctl.version(), kernel=os.uname()[2], fsname=survey.fsname,
                       mount_fstype=survey.fstype, launcher=launcher)
    environment[name] = program
    builder.set_environment(**environment)
    plan = survey.plan()
    if module.check_mode:
        survey_module.exit_with_envelope(module, builder, name, True, plan=plan)
    raw_path = os.path.join(start.make_run_dir(), '%s.out' % name)
    changed = _run(survey, builder, raw_path)
    builder.set_raw_output(raw_path if os.path.exists(raw_path) else None)
    survey_module.exit_with_envelope(module, builder, name, changed, plan=plan)
