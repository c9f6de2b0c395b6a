"""What the test tiers share, imported as ``tests.helpers.*`` (the repository root is on pytest's path): the fake
model servers, small stores, a broken plug-in, fake embedders and a toy method. Test modules import from here,
never from one another across tiers."""
