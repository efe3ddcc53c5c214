from django.urls import path

from . import views

urlpatterns = [
    path("sessions/", views.SessionListCreateView.as_view(), name="session-list"),
    path("sessions/<str:session_id>/", views.SessionDetailView.as_view(), name="session-detail"),
    path("sessions/<str:session_id>/mode-changes/", views.ModeChangeListView.as_view(), name="session-mode-changes"),
    path("catalog/rollout/", views.RolloutView.as_view(), name="catalog-rollout"),
    path("catalog/transitions/", views.TransitionsView.as_view(), name="catalog-transitions"),
]
