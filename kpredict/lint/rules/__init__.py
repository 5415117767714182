"""One rule per module (`kpNNN_<name>.py`); kpredict.lint.registry lists them."""
