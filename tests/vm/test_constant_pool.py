"""The VM's constant pool: small constants are shared with their equals, a large weight is
pooled by identity (hashing 100 MB of ResNet-50 weights once cost as much as compiling it),
and every pooled array is read-only."""
import numpy as np

from rvmdbg.relay.ast import Module
from rvmdbg.vm.compiler import _POOL_BY_VALUE, _ModuleTables


def test_small_constants_are_shared_by_value():
    t = _ModuleTables(Module())
    a = t.constant(np.arange(4, dtype="float32"))
    assert t.constant(np.arange(4, dtype="float32")) == a
    assert t.constant(np.arange(4, dtype="int32")) != a       # another dtype
    assert t.constant(np.arange(4, dtype="float32").reshape(2, 2)) != a  # another shape
    assert not t.constants[a].flags.writeable


def test_a_large_weight_is_pooled_once_per_array_without_hashing_its_bytes():
    big = np.ones(_POOL_BY_VALUE // 4 + 1, dtype="float32")
    t = _ModuleTables(Module())
    i = t.constant(big)
    assert t.constant(big) == i                     # the same array: one entry
    assert t.constant(big.copy()) != i              # an equal copy is not hashed to find it
    pooled = t.constants[i]
    assert not pooled.flags.writeable and np.array_equal(pooled, big)
    big[0] = 5.0                                    # the pool holds its own copy
    assert pooled[0] == 1.0
