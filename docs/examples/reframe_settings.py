"""A minimal ReFrame site configuration for docs/examples/reframe_commscope.py: this host
only, jobs run as local processes with no launcher in front (commscope starts MPI)."""

site_configuration = {
    'systems': [{
        'name': 'local',
        'descr': 'this host',
        'hostnames': ['.*'],
        'partitions': [{
            'name': 'default',
            'scheduler': 'local',
            'launcher': 'local',
            'environs': ['plain'],
        }],
    }],
    'environments': [{'name': 'plain'}],
    # Progress to the terminal; each check's figures in ./perflogs (ReFrame's default).
    'logging': [{
        'handlers': [{'type': 'stream', 'name': 'stdout', 'level': 'info',
                      'format': '%(message)s'}],
    }],
}
