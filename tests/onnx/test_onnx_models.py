"""Model-zoo networks the onnx package ships (backend/test/data/light, weights as
ConstantOfShape nodes): imported, run on the VM with an all-ones input, matching the shipped
output. The two smallest here; scripts/onnx_support.py covers the node tests."""
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

from rvmdbg.onnx import import_model  # noqa: E402
from rvmdbg.relay.typecheck import check_module  # noqa: E402
from rvmdbg.vm.compiler import compile_module  # noqa: E402
from rvmdbg.vm.machine import VirtualMachine  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet"])
def test_a_light_model_runs_on_the_vm_and_matches_its_shipped_output(name):
    path = LIGHT / f"light_{name}.onnx"
    if not path.exists():
        pytest.skip(f"{path} is not in this onnx package")
    imp = import_model(str(path))
    (param,) = imp.module.functions["main"].params
    x = np.ones(param.type_annotation.shape, "float32")
    out = VirtualMachine(compile_module(check_module(imp.module))).invoke("main", [x])
    expected = numpy_helper.to_array(onnx.load_tensor(str(LIGHT / f"light_{name}_output_0.pb")))
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-4, atol=1e-5)
