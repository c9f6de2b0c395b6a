"""Sentence embedders by name (`EMBEDDERS`): what the dense methods read text with."""
