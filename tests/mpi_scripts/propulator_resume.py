"""Construct a Propulator on a checkpoint directory with records; print its population size
before any propulate() call (Propulate 1.2 loads the checkpoint in the constructor)."""

import random
import sys

from mpi4py import MPI

import propulate
from propulate.space import SearchSpace

space = SearchSpace({f"x{i}": (-5.0, 5.0) for i in range(4)})
rng = random.Random(MPI.COMM_WORLD.rank)
prop = propulate.get_default_propagator(4, space, rng=rng)
opt = propulate.Propulator(lambda p: 0.0, prop, rng, checkpoint_path=sys.argv[1], generations=1)
# One write per line: print() writes its pieces separately, which interleaves between ranks.
sys.stdout.write(f"POPULATION {len(opt.population)} {len(opt.propulator.population)}\n")
sys.stdout.flush()
