"""
The yardstick benchmarks/run.py measures Aptix Modes against: a separate, minimal Django + DRF project that
imports nothing from this one. It has DRF's TokenAuthentication, the Security and Common middleware, and four
endpoints written as a newcomer would: a constant, one durable single-row UPDATE, a naive ORM mode change, and
a ListAPIView over the modes.
"""
