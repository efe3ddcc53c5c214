from django.apps import AppConfig


class FrontDoorConfig(AppConfig):
    name = "front_door"
    verbose_name = "Front door"
