from django.urls import path

from . import views
from .routing import views as routing

urlpatterns = [
    path("modes/", views.ModeListView.as_view(), name="mode-list"),
    path("modes/<str:key>/", views.ModeDetailView.as_view(), name="mode-detail"),
    path("modes/<str:key>/tools/", views.ModeToolsView.as_view(), name="mode-tools"),
    path("system-prompt/", views.SystemPromptView.as_view(), name="system-prompt"),
    path("catalog/import/", views.CatalogImportView.as_view(), name="catalog-import"),
    path("catalog/export/", views.CatalogExportView.as_view(), name="catalog-export"),
    path("catalog/revisions/", views.CatalogRevisionListView.as_view(), name="catalog-revision-list"),
    path("catalog/revisions/<str:number>/", views.CatalogRevisionDetailView.as_view(), name="catalog-revision-detail"),
    path("catalog/revisions/<str:number>/diff/", views.CatalogRevisionDiffView.as_view(), name="catalog-revision-diff"),
    path("catalog/revisions/<str:number>/approve/", views.ApproveRevisionView.as_view(), name="catalog-revision-approve"),
    path("catalog/revisions/<str:number>/publish/", views.PublishRevisionView.as_view(), name="catalog-revision-publish"),
    path("catalog/revisions/<str:number>/evals/", routing.RoutingEvaluationView.as_view(), name="catalog-revision-evals"),
    path(
        "catalog/revisions/<str:number>/evals/latest/", routing.LatestRoutingEvaluationView.as_view(),
        name="catalog-revision-evals-latest",
    ),
    path("catalog/rollout/promote/", views.RolloutPromoteView.as_view(), name="catalog-rollout-promote"),
    path("catalog/rollout/abort/", views.RolloutAbortView.as_view(), name="catalog-rollout-abort"),
    path("catalog/routing-cases/", routing.RoutingCaseListView.as_view(), name="routing-case-list"),
]
