"""TinyML workloads: the kit's models of the paper's applications (quantized by build.py,
exported as .tflite by kit_export.py, built as firmware by kit_firmware.py), and `mcusim model`:
a .tflite file imported, generated as C onto TFLite's integer arithmetic, built, run and
validated against the TFLite Micro interpreter."""
