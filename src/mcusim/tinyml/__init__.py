"""TinyML workloads: the int8 arithmetic the kit's kernels use (a numpy oracle), model
descriptions of the paper's applications, and the C generator for firmware/models."""
