"""ELMo biLM encoder: exact reference reimplementation, weight formats, embedding API, training."""

from .elmo import Elmo
from .mix import LayerMix, ScalarMix
from .model import BiLM, BiLMConfig

__all__ = ["Elmo", "LayerMix", "ScalarMix", "BiLM", "BiLMConfig"]
