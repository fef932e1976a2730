# lit configuration for pb: RUN lines use the tools in $PB_BUILD/bin and
# LLVM 22's FileCheck/not.
import os
import shutil

import lit.formats

config.name = "pb"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)

here = config.test_source_root
root = os.path.abspath(os.path.join(here, "..", ".."))
build = os.environ.get("PB_BUILD", os.path.join(root, "build"))
config.test_exec_root = os.path.join(build, "lit")
llvm_bin = os.environ.get("LLVM_BIN", "/usr/lib/llvm-22/bin")

path = [os.path.join(build, "bin"), llvm_bin]
cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
if os.path.exists(os.path.join(cuda, "bin", "ptxas")):
    path.append(os.path.join(cuda, "bin"))
    config.available_features.add("ptxas")
config.environment["PATH"] = os.pathsep.join(path + [config.environment.get("PATH", "")])

# nvdisasm (pb-prof --static's instruction mix): $PB_NVDISASM, the CUDA
# toolkit's, or one on PATH (PyPI's nvidia-cuda-nvdisasm); the tests that
# need it are UNSUPPORTED without it.
def _nvdisasm():
    env = os.environ.get("PB_NVDISASM")
    if env:
        return env if os.access(env, os.X_OK) else None
    found = os.path.join(cuda, "bin", "nvdisasm")
    return found if os.access(found, os.X_OK) else shutil.which("nvdisasm")
nvdisasm = _nvdisasm()
if nvdisasm:
    config.available_features.add("nvdisasm")
    config.environment["PB_NVDISASM"] = nvdisasm
    config.substitutions.append(("%nvdisasm", nvdisasm))
# NVIDIA's Tile IR tools (pb-codegen --backend=tile, docs/tileir.md):
# $PB_TILEIRAS / $PB_TILEIRDISASM, on PATH, or in the virtual environment
# scripts/deps.sh --tile installs (build/venv-tile); the tests that need
# them are UNSUPPORTED without them.
def _tile_tool(name, env):
    given = os.environ.get(env)
    if given:
        return given if os.access(given, os.X_OK) else None
    found = shutil.which(name)
    if found:
        return found
    import glob
    hits = sorted(glob.glob(os.path.join(
        build, "venv-tile", "lib", "python3*", "site-packages", "nvidia",
        "cu*", "bin", name)))
    return hits[-1] if hits else None
for name, env in (("tileiras", "PB_TILEIRAS"), ("tileirdisasm", "PB_TILEIRDISASM")):
    tool = _tile_tool(name, env)
    if tool:
        config.available_features.add(name)
        config.environment[env] = tool
        config.substitutions.append(("%" + name, tool))
if shutil.which("rsvg-convert"):
    config.available_features.add("rsvg-convert")
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "HOME"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

python = os.environ.get("PYTHON", "/usr/bin/python3")
config.substitutions.append(("%python", python))
config.substitutions.append(("%models", os.path.abspath(os.path.join(root, "..", "shared", "models"))))
config.substitutions.append(("%onnxdata", "/usr/share/libonnx-testdata/data"))
config.substitutions.append(("%S_inputs", os.path.join(here, "Inputs")))
config.substitutions.append(("%pipelines", os.path.join(root, "pipelines")))
config.substitutions.append(("%examples", os.path.join(root, "examples")))

if os.path.isdir("/usr/share/libonnx-testdata/data/node"):
    config.available_features.add("onnx-testdata")
if os.path.isdir(os.path.abspath(os.path.join(root, "..", "shared", "models"))):
    config.available_features.add("shared-models")

# GPU tests: "cuda-driver" only where libcuda.so.1 loads and reports a
# device (never on the CPU machines, where those tests are unsupported);
# "cuda-mock" where tests/mock/cuda.c builds into a fake libcuda.so.1 that
# runs nothing but logs launches (%mockcuda is its directory, for
# LD_LIBRARY_PATH), so that the GPU runner's host side is tested anyway.
def _cuda_device():
    import ctypes
    try:
        cu = ctypes.CDLL("libcuda.so.1")
        n = ctypes.c_int(0)
        return cu.cuInit(0) == 0 and cu.cuDeviceGetCount(ctypes.byref(n)) == 0 and n.value > 0
    except OSError:
        return False
if _cuda_device():
    config.available_features.add("cuda-driver")

import subprocess
mock_dir = os.path.join(build, "mock")
mock_lib = os.path.join(mock_dir, "libcuda.so.1")
mock_src = os.path.join(root, "tests", "mock", "cuda.c")
try:
    os.makedirs(mock_dir, exist_ok=True)
    if (not os.path.exists(mock_lib) or
            os.path.getmtime(mock_lib) < os.path.getmtime(mock_src)):
        subprocess.run([os.environ.get("CC", "gcc"), "-shared", "-fPIC", "-O1",
                        "-o", mock_lib, mock_src], check=True)
    config.available_features.add("cuda-mock")
except (OSError, subprocess.CalledProcessError):
    pass
config.substitutions.append(("%mockcuda", mock_dir))
