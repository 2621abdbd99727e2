"""The objectives: the cheapest design (min_cost.py), the fastest (min_time.py) and the cheapest
job (min_job_cost.py). Each returns a solved model or proves that none exists."""
