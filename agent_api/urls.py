from django.urls import path

from . import views

urlpatterns = [
    path("tools/", views.ToolListView.as_view(), name="tool-list"),
    path("tools/<str:name>/invoke/", views.ToolInvokeView.as_view(), name="tool-invoke"),
    path("sessions/<str:session_id>/context/", views.SessionContextView.as_view(), name="session-context"),
    path(
        "sessions/<str:session_id>/confirmations/<str:confirmation_id>/", views.ConfirmationAnswerView.as_view(),
        name="session-confirmation",
    ),
]
