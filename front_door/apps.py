"""The front door: what a person or a program finds at the service's address (GET /)."""

from django.apps import AppConfig


class FrontDoorConfig(AppConfig):
    name = "front_door"
    verbose_name = "Front door"
