"""How results are shown: terminal tables, exports."""
