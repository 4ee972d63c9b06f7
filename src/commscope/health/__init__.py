"""The health check: the screen of nodes and links, the full matrix, the launches that trace
a failure, and the topology they are judged against."""
