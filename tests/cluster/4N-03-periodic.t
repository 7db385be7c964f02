#!/bin/bash
# 03-periodic.t on a cluster of four nodes, each slurmd in its own namespaces.
# needs: a quiet host (it times the helper's sorts, which wait for the node's memory to be quiet)
ZS_NODES=4 exec bash "$(dirname "$0")/03-periodic.t"
