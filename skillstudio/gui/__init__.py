"""The Qt layer: the only package that imports PySide6. Widgets take core objects in their
constructors (``Qt<Thing>(model)``) and never run SQL themselves."""
