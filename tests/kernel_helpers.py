"""Scalar values and NumPy kernels for tests that assemble executables by hand (tests/vm,
tests/debug)."""
from __future__ import annotations

import numpy as np


def i32(v):
    return np.array(v, dtype=np.int32)


def i64(v):
    return np.array(v, dtype=np.int64)


def k_add(xs):
    return np.asarray(xs[0] + xs[1])


def k_sub(xs):
    return np.asarray(xs[0] - xs[1])


def k_less(xs):
    return np.asarray(xs[0] < xs[1])
