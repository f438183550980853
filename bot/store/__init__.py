"""Persistence: SQLAlchemy 2 Core tables and one repository. SQLite by default, PostgreSQL via DATABASE_URL.

Every state change that must happen once (claiming an event, starting a merge, leasing a
session) is a single conditional INSERT or UPDATE whose row count says who won.
"""
from .engine import make_engine
from .repository import Batch, Store, Submitted

__all__ = ["Batch", "Store", "Submitted", "make_engine"]
