"""Building the real-data benchmark from public model answers (GSM8K solutions, TruthfulQA answers).

Sources are read from paths the user gives; nothing from them is stored in the repository.
"""
