#!/usr/bin/env python3
"""Registers and spills of the CUDA kernels, without a GPU.

Compiles the program the CUDA backend compiles (kernels/*.cu in the order of
src/backend/cuda/kernels.rs `program_source`, the same NVRTC options) with ptxas's verbose
output, and prints one line per kernel whose name contains the filter:

    python3 scripts/kernel_registers.py [FILTER] [--arch sm_90]

NVRTC comes from LD_LIBRARY_PATH (libnvrtc.so.13 and its builtins), e.g. the
nvidia-cuda-nvrtc wheel unpacked:  pip download --no-deps "nvidia-cuda-nvrtc==13.0.*"
A kernel that spills under its launch bound shows it here (atos_bfs_worker did: 64 registers
and 216 bytes of spill stores under __launch_bounds__(1024), or (512) alone; 80 registers and
none under (512, 1)).
"""
import argparse
import ctypes
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def program_source():
    rs = open(os.path.join(ROOT, "src/backend/cuda/kernels.rs")).read()
    files = dict(re.findall(r'pub const (\w+)_SOURCE: &str = include_str!\("\.\./\.\./\.\./kernels/([^"]+)"\)', rs))
    body = re.search(r'format!\(\s*"([^"]*)"', rs[rs.index("pub fn program_source"):]).group(1)
    order = re.findall(r"\{(\w+)_SOURCE\}", body)
    missing = [o for o in order if o not in files]
    if missing:
        sys.exit(f"kernels.rs names {missing} in program_source but includes no file for them")
    return "\n".join(open(os.path.join(ROOT, "kernels", files[o])).read() for o in order) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("filter", nargs="?", default="", help="kernel name substring")
    ap.add_argument("--arch", default="sm_90")
    a = ap.parse_args()
    try:
        lib = ctypes.CDLL("libnvrtc.so.13")
    except OSError as e:
        sys.exit(f"libnvrtc.so.13 not found ({e}): put NVRTC 13 on LD_LIBRARY_PATH")
    prog = ctypes.c_void_p()
    src = program_source().encode()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"switchyard_kernels.cu", 0, None, None):
        sys.exit("nvrtcCreateProgram failed")
    opts = [f"--gpu-architecture={a.arch}".encode(), b"--std=c++17", b"-lineinfo", b"--ptxas-options=-v"]
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    text = log.value.decode(errors="replace")
    if rc:
        sys.exit(f"compile failed (NVRTC {rc}):\n{text[:4000]}")
    kernel, spill = None, ""
    for line in text.splitlines():
        m = re.search(r"Function properties for (\w+)", line)
        if m:
            kernel = m.group(1)
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            spill = f"spill stores {m.group(1)} B, loads {m.group(2)} B"
        m = re.search(r"Used (\d+) registers", line)
        if m and kernel and a.filter in kernel:
            print(f"{kernel:40} {m.group(1):>4} registers  {spill}")
        if m:
            kernel, spill = None, ""


if __name__ == "__main__":
    main()
