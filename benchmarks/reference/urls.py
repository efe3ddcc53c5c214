"""The reference project's URLs."""

from django.urls import path

from . import views

urlpatterns = [
    path("constant/", views.ConstantView.as_view()),
    path("update/", views.DurableUpdateView.as_view()),
    path("change-mode/", views.NaiveChangeModeView.as_view()),
    path("modes/", views.NaiveModeListView.as_view()),
]
