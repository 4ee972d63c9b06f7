"""A ReFrame check that runs commscope and reads its JSON: no regular expression.

    reframe -C docs/examples/reframe_settings.py -c docs/examples/reframe_commscope.py -r

commscope launches MPI itself, so ReFrame runs it as a plain local command. The
variables are set with `-S NAME=VALUE` (docs/ci.md).
"""

import json
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import (performance_function, run_before, sanity_function,
                                   variable)


@rfm.simple_test
class CommscopePingPong(rfm.RunOnlyRegressionTest):
    descr = 'commscope ping-pong latency with its launch-level 95% interval'
    valid_systems = ['*']
    valid_prog_environs = ['*']
    time_limit = '10m'

    commscope = variable(str, value='commscope')
    db = variable(str, value='commscope.db')
    mpi = variable(str, value='')  # an MPI prefix for --mpi; empty: commscope's own choice
    sizes = variable(str, value='8,1KiB')
    launches = variable(str, value='auto')
    # This site's 8 B latency. The median may be up to 50% above it; the interval's upper
    # end up to 3 times it (a wider interval is a run too noisy to judge).
    latency_us = variable(float, value=5.0)

    @run_before('run')
    def command(self):
        self.executable = self.commscope
        self.executable_opts = ['run', 'pingpong', '--np', '2', '--sizes', self.sizes,
                                '--launches', self.launches, '--json', '--db', self.db]
        if self.mpi:
            self.executable_opts += ['--mpi', self.mpi]
        self.reference = {'*': {
            'latency': (self.latency_us, None, 0.5, 'us'),
            'latency_ci_high': (self.latency_us, None, 2.0, 'us'),
        }}

    def output(self):
        """`commscope run --json`: an object that names its schema (docs/schemas.md)."""
        with open(os.path.join(self.stagedir, sn.evaluate(self.stdout))) as out:
            return json.load(out)

    def cases(self):
        return self.output()['cases']

    def smallest(self):
        return min(self.cases(), key=lambda case: case['bytes'])

    @sanity_function
    def every_case_measured(self):
        cases = self.cases()
        return sn.all([
            sn.assert_eq(self.job.exitcode, 0),
            sn.assert_eq(self.output()['schema'], 'urn:commscope:cases:4'),
            sn.assert_gt(len(cases), 0),
            *(sn.assert_bounded(c['median_s'], c['ci_low_s'], c['ci_high_s'])
              for c in cases),
        ])

    @performance_function('us')
    def latency(self):
        return self.smallest()['median_s'] * 1e6

    @performance_function('us')
    def latency_ci_high(self):
        return self.smallest()['ci_high_s'] * 1e6
