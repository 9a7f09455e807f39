"""OpenBLAS's threads, which must be set before torch is imported: Debian's torch runs its
matrix products in OpenBLAS, whose thread count is OPENBLAS_NUM_THREADS, not
torch.set_num_threads (bench/torch_ref.py measured the same)."""
import os


def cores():
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def set_threads(argv):
    """Sets OpenBLAS's threads from --blas-threads N in argv (default: the cores), unless
    OPENBLAS_NUM_THREADS is set already; a bad value is left for the script's parser to refuse."""
    n = str(cores())
    for i, a in enumerate(argv):
        if a == "--blas-threads" and i + 1 < len(argv):
            n = argv[i + 1]
        elif a.startswith("--blas-threads="):
            n = a.split("=", 1)[1]
    if n.isdigit() and int(n) > 0:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", n)
