"""The demo collections (``corpora``: their documents, models and where their indexes live), the examples the app
offers for them (``examples``) and the hand-made labels of their words' uses (``labels``): what the app shows and the
benchmarks in bench/ measure, without the UI."""
