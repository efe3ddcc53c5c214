"""Django's admin, installed with this project's site (aptix_site.admin.AdminSite) as its default."""

from django.contrib.admin.apps import AdminConfig as DjangoAdminConfig


class AdminConfig(DjangoAdminConfig):
    default_site = "aptix_site.admin.AdminSite"
