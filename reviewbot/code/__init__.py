"""Facts about code that several stages share: a file's language, what a line is (comment,
import, definition), what kind of file a path is, and where definitions begin and end.

Rules, context and review all read these; none of them owns them.
"""
