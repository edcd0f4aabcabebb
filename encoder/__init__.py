"""ELMo biLM encoder: exact reference reimplementation, weight formats, embedding API, training."""

from .download import download_model
from .elmo import Elmo
from .mix import LayerMix, ScalarMix
from .model import BiLM, BiLMConfig
from .model_files import PUBLISHED, resolve_model

__all__ = ["Elmo", "LayerMix", "ScalarMix", "BiLM", "BiLMConfig", "PUBLISHED", "download_model", "resolve_model"]
