"""gpu-tracker: GPU cloud price history and whole-job recommendations."""

__version__ = "0.1.0"
