"""Adapters to other RL libraries, one module per library (TorchRL needs none); docs/libraries.md lists them all."""
