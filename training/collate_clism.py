"""Old path of training/data/clism.py (before issue 15's layout), kept for benchmarks/clism_throughput.py;
delete it once nothing imports it. New code imports training.data.clism."""
from training.data.clism import *  # noqa: F403
from training.data.clism import IGNORE, QUE_TOKEN, CLISMCollator, add_que_token, pair_rng  # noqa: F401
