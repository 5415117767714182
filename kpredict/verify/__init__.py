"""Checking predictions against what really runs.

Everything that needs torch lives here and imports it lazily, inside functions, so that importing
`kpredict.verify` (for its annotations parser or its renderers) stays cheap and works without torch.
User code is only ever run in a child process (`kpredict.verify.child`), never in the kpredict process.
"""
