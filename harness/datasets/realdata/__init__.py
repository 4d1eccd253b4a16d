"""Building the real-data benchmark from public model answers (GSM8K solutions, TruthfulQA answers).

Sources are read from paths the user gives; nothing from them is stored in the repository.

Modules:
- ``sources``: readers for GSM8K model solutions and TruthfulQA human-labelled model answers
- ``claims``: a TruthfulQA question's answers grouped by the claim they state, and which claims are true
- ``wording``: the text written around real answers (notes in a question, words of echoing agents)
- ``build``: cases from real answers, split by source question, written reproducibly with a data card
"""
