"""The torch code a download copies (advisor/export/source.py cuts these modules into
definitions): among it the advisor's own layer kinds, initialisation, CD-1 and early
stopping, which the calibration and the probe import from here."""
