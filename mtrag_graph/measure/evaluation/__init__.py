"""Generation metrics of the MTRAG benchmark: ROUGE-L, BERTScore, RB_alg, RB_llm, RL_F, conditioning, HM3."""
