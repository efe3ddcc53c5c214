"""
Admin for the mode catalog: review modes (with a preview of what a session in one receives), search, reorder, add
custom ones, switch the default; declare the tools the agent's client executes; for both, a row's history, revert and
restore; the catalog's revisions and releases. Every form posted here that changes the catalog is one revision.
"""

import json
from collections import Counter
from dataclasses import replace

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected as django_delete_selected
from django.contrib.admin.templatetags.admin_urls import admin_urlname
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied
from django.db import models
from django.forms.fields import InvalidJSONInput
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.template.loader import render_to_string
from django.urls import path, reverse
from django.utils.decorators import method_decorator
from django.utils.html import format_html
from django.views.decorators.http import require_POST, require_safe
from rest_framework.exceptions import ValidationError

from aptix_site.admin import LargeTableAdmin, ReadOnlyAdmin, admin_page
from aptix_site.errors import error_message
from aptix_site.service_errors import InvalidInput, ServiceError
from aptix_site.text import DuplicateKey, refuse_duplicate_keys, unstorable_text, whole_number

from .catalog import published_catalog, working_catalog
from .checks import UNRESOLVED_TOOLS_HINT, unresolved_tools_message
from .coding_agents.downloads import ExportForm, zip_download
from .coding_agents.formats import FORMATS as AGENT_FORMATS
from .coding_agents.importing import import_agent_files
from .coding_agents.uploads import ImportForm, uploaded_files
from .graph import GRAPH_HINT, catalog_graph_problems
from .models import AgentMode, ArchivedHistory, CatalogHead, CatalogRevision, CatalogRollout, DeclaredTool, RoutingCase
from .permissions import may
from .portable import PortableFileError
from .releases import (
    abort_rollout, approve_revision, may_publish, pending_release, promote_rollout, publish_revision, release_actions,
    release_summary, revision_diff
)
from .revision_store import MODE, TOOL, check_unchanged_since, deleted_since, history_of
from .rollouts import Staging
from .serializers import AbortRequest, PublishRequest
from .routing.cases import InvalidRoutingCase, mode_keys, mode_problems, room_problems
from .routing.evaluation import evaluation_payload, latest_evaluation
from .routing.files import FILE_FORMATS as CASE_FILE_FORMATS
from .routing.files import export_cases, import_cases
from .routing.offline import run_offline_evaluation
from .routing.serializers import RoutingEvaluationResponse
from .services import (
    ModeDeletionRefused, catalog_change, check_deletable, default_not_reverted, delete_modes, deletion_refusal, revert_row,
    set_default_mode
)
from .validators import is_string_list


DELETED_ROW_MARK = "~"  # outside TOOL_NAME_CHARACTERS and a pk's digits


class CatalogAdmin(admin.ModelAdmin):
    """
    A catalog table's admin: every form posted to it (an edit, positions, an action, a deletion) is one revision by its
    user (catalog_change), refused in the catalog's words, changing nothing, if it would break a rule. A row's History
    page lists the revisions that changed it; it can be reverted to any of them (restored, if deleted since): a new one.
    """

    change_list_template = "admin/modes/change_list_with_deleted_rows.html"
    change_form_template = "admin/modes/catalog_change_form.html"
    kind = naming = None  # the subclass's: its rows' kind in the revisions, the field they name a row by

    class Media:
        css = {"all": ["modes/admin.css"]}

    def _one_revision(self, view, request, *args, **kwargs):
        if request.method != "POST":
            if request.method == "GET":
                release_banner(request)
            return view(request, *args, **kwargs)
        try:
            with catalog_change(by=request.user):
                return view(request, *args, **kwargs)
        except ServiceError as error:
            self.message_user(request, f"Nothing was changed: {error}", messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        return self._one_revision(self._unless_changed_since_loaded, request, object_id, form_url, extra_context)

    @staticmethod
    def loaded_revision(request):
        """
        The revision a page that edits rows shows them at: the latest, read before the rows; once posted, what the page
        says (a page shown again with its errors keeps it), judged where a row is saved.
        """
        if request.method != "POST":
            return CatalogHead.objects.values_list("latest", flat=True).get(pk=1)
        return request.POST.get("_loaded_revision")

    def check_unchanged_since_loaded(self, request, url_ids: list[str]) -> None:
        """
        ChangedSinceLoaded (checked under the catalog's lock, _one_revision) if a revision after the posted page's
        changed one of the rows: saving them would undo that change unseen.
        """
        loaded = request.POST.get("_loaded_revision")
        if loaded is not None and url_ids:  # a form posted without it (a script's) is not judged
            number = whole_number(loaded, at_most=2**31 - 1)
            identities = [self.identity_of(url_id) for url_id in url_ids]
            check_unchanged_since(kind=self.kind, identities=identities, number=number)

    def _unless_changed_since_loaded(self, request, object_id, form_url, extra_context):
        """The change form, shown with the revision it shows the row at, and refused if saved after another's change."""
        if object_id:
            self.check_unchanged_since_loaded(request, [unquote(object_id)])
        extra_context = {"loaded_revision": self.loaded_revision(request), **(extra_context or {})}
        return super().changeform_view(request, object_id, form_url, extra_context)

    def changelist_view(self, request, extra_context=None):
        deleted_rows = [(self.deleted_row_url_id(removal.identity), removal) for removal in deleted_since(self.kind)]
        extra_context = {"deleted_rows": deleted_rows, **(extra_context or {})}
        if self.list_editable:
            extra_context["loaded_revision"] = self.loaded_revision(request)
        return self._one_revision(super().changelist_view, request, extra_context)

    def get_changelist_formset(self, request, **kwargs):
        """The list's editable fields, whose rows are refused as the change form's are if changed since the page's."""
        model_admin, pk_name = self, self.model._meta.pk.name

        class UnlessChangedSinceLoaded(super().get_changelist_formset(request, **kwargs)):
            def clean(self):
                super().clean()
                # The rows the list saves, by the ids posted (one deleted since would be a new instance).
                changed = [str(form[pk_name].data) for form in self.forms if form.has_changed()]
                model_admin.check_unchanged_since_loaded(request, changed)

        return UnlessChangedSinceLoaded

    def delete_view(self, request, *args, **kwargs):
        return self._one_revision(super().delete_view, request, *args, **kwargs)

    def get_urls(self):
        revert = self.admin_site.admin_view(self.revert_view)
        name = f"{self.opts.app_label}_{self.opts.model_name}_revert"
        return [path("<path:object_id>/history/<int:number>/revert/", revert, name=name), *super().get_urls()]

    def identity_of(self, object_id: str) -> str:
        """
        What revisions call the row of this URL: a mode's id; a tool's name. A live tool's URL holds its pk, a deleted
        one's its name after DELETED_ROW_MARK, which no name holds: a name of digits is never read as another's pk.
        """
        if self.naming == "pk":
            return object_id
        if object_id.startswith(DELETED_ROW_MARK):
            return object_id[len(DELETED_ROW_MARK):]
        is_pk = object_id.isascii() and object_id.isdigit()  # str.isdigit() takes '²', which no pk lookup does
        live = self.model.objects.filter(pk=object_id).values_list("name", flat=True) if is_pk else []
        return next(iter(live), object_id)

    def deleted_row_url_id(self, identity: str) -> str:
        return identity if self.naming == "pk" else DELETED_ROW_MARK + identity

    @method_decorator(require_safe)
    def history_view(self, request, object_id, extra_context=None):
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        object_id = unquote(object_id)  # as Django's own views do: the admin's links quote it (admin_urlquote)
        identity = self.identity_of(object_id)
        changes = history_of(self.kind, identity)
        live = self.model.objects.filter(**{self.naming: identity}).first()
        if not changes and live is None:
            raise Http404(f"No revision has {self.opts.verbose_name} {identity!r}.")
        return admin_page(
            self, request, "admin/modes/row_history.html", title=f"History: {live or changes[0].name}", object=live,
            object_id=object_id, changes=changes, may_revert=self.may_revert(request, live),
        )

    @method_decorator(require_POST)
    def revert_view(self, request, object_id, number):
        object_id = unquote(object_id)
        identity = self.identity_of(object_id)
        if not self.may_revert(request, self.model.objects.filter(**{self.naming: identity}).first()):
            raise PermissionDenied
        try:
            revision = revert_row(model=self.model, identity=identity, number=number, reverted_by=request.user)
        except ServiceError as error:
            self.message_user(request, f"Not reverted: {error}", messages.ERROR)
        else:
            done = f"revision {revision.number}" if revision else "no new revision: it was in that state already"
            self.message_user(request, f"Reverted to its state at revision {number}: {done}.", messages.SUCCESS)
            if notice := self.left_as_is(identity, number):
                self.message_user(request, notice, messages.WARNING)
        return HttpResponseRedirect(reverse(admin_urlname(self.opts, "history"), args=[quote(object_id)]))

    def left_as_is(self, identity: str, number: int) -> str | None:
        """What a revert to revision number did not write back, for the admin to be told; None: all of it."""
        return None

    def may_revert(self, request, live) -> bool:
        """Reverting a row changes it (change permission); restoring a deleted row creates it (add permission)."""
        return self.has_change_permission(request, live) if live else self.has_add_permission(request)


class PromptField(forms.CharField):
    """A prompt kept as written (an export gives it back to the coding agent it came from): not stripped, and with
    the line breaks a browser sends (CR LF) as the LF they were."""

    widget = forms.Textarea(attrs={"rows": 12, "class": "aptix-wide aptix-code"})

    def __init__(self, **kwargs):
        super().__init__(**{**kwargs, "strip": False})

    def to_python(self, value):
        return super().to_python(value).replace("\r\n", "\n")


class AgentModeForm(forms.ModelForm):
    """The change form, which also keeps the mode graph's invariants for the catalog the save would leave."""

    class Meta:
        # The admin's words for fields whose model help text is written for the catalog, not for this form.
        help_texts = {
            "when_to_use": f"One sentence, on one line, of at most {AgentMode.when_to_use.field.max_length} "
            "characters: the system prompt lists it as '- key: sentence', and the model chooses between modes by it. "
            "It wraps here only so that it can be read whole.",
            "associated_tool_ids": "Names of the tools enabled while this mode is active; the preview below shows "
            "them as the model gets them.",
        }
        # A textarea, so that the whole sentence shows; a line break in it is refused with the field's error.
        widgets = {"when_to_use": forms.Textarea(attrs={"rows": 2, "class": "aptix-wide"})}
        field_classes = {"prompt": PromptField, "custom_instructions": PromptField}

    def clean(self):
        cleaned = super().clean()
        mode = self.instance
        graph = {name: cleaned.get(name, getattr(mode, name)) for name in ("key", "switch_targets", "llm_can_enter")}
        edited = AgentMode(pk=mode.pk, is_default=mode.is_default, **graph)
        problems = catalog_graph_problems([*AgentMode.objects.exclude(pk=mode.pk), edited])
        if problems:
            raise forms.ValidationError(" ".join([*problems, GRAPH_HINT]), code="mode_graph")
        return cleaned


@admin.register(AgentMode)
class AgentModeAdmin(CatalogAdmin):
    kind, naming = MODE, "pk"
    form = AgentModeForm
    change_list_template = "admin/modes/agentmode_change_list.html"
    list_display = ["key", "display_name", "status", "is_default", "source", "version", "position"]
    list_display_links = ["key", "display_name"]
    list_editable = ["position"]
    list_filter = ["status", "source", "is_default"]
    search_fields = ["key", "display_name", "description", "when_to_use", *AgentMode.list_field_names()]
    actions = ["make_default", "delete_selected"]
    readonly_fields = [
        "id", "is_default", "source", "system_prompt", "instructions", "enabled_tools", "created_at", "updated_at"
    ]
    fieldsets = [
        (None, {"fields": ["id", "key", "display_name", "description", "when_to_use"]}),
        ("Catalog", {"fields": ["is_default", "status", "version", "position", "source"]}),
        ("Behaviour", {"fields": [
            "prompt", "mode_instructions", "custom_instructions", "behavior_hints", "human_role_hints",
            "example_utterances",
        ]}),
        ("Tools and retrieval", {"fields": ["associated_tool_ids", "tool_group_hints", "rag_scope_hints"]}),
        ("Recognition (advisory)", {"fields": ["strong_signals", "weak_signals"]}),
        ("Mode graph", {"fields": ["switch_targets", "llm_can_enter", "entry_confirmation"]}),
        ("History", {"fields": ["created_at", "updated_at"]}),
    ]
    preview_fieldset = (
        "Preview: what a session in this mode receives, as saved",
        {"fields": ["system_prompt", "instructions", "enabled_tools"]},
    )

    def get_urls(self):
        import_page = self.admin_site.admin_view(self.import_view)
        export_page = self.admin_site.admin_view(require_safe(self.export_view))  # it reads; a POST is a 405
        return [
            path("import/", import_page, name="modes_agentmode_import"),
            path("export/", export_page, name="modes_agentmode_export"),
            *super().get_urls(),
        ]

    def may_import(self, request) -> bool:
        return self.has_add_permission(request) and self.has_change_permission(request)

    def changelist_view(self, request, extra_context=None):
        may = {"may_import": self.may_import(request), "may_export": self.has_view_permission(request)}
        return super().changelist_view(request, {**may, **(extra_context or {})})

    def import_view(self, request):
        """Coding agents' files imported (modes.coding_agents), as import_modes does it, with the same report."""
        if not self.may_import(request):
            raise PermissionDenied
        form = ImportForm(request.POST, request.FILES) if request.method == "POST" else ImportForm()
        context = {"title": "Import coding agents' files", "form": form}
        if form.is_bound and form.is_valid():
            from_format = form.cleaned_data["format"] or None
            files, unread = uploaded_files(form.cleaned_data["files"], from_format=from_format)
            try:
                imported = import_agent_files(
                    files=files, from_format=from_format, update=form.cleaned_data["update"],
                    dry_run=form.cleaned_data["dry_run"], imported_by=request.user, unread=unread,
                )
            except PortableFileError as error:
                context["problems"] = error.problems
            else:
                context.update(result=imported.result, report=imported.report, skipped=imported.skipped)
        return admin_page(self, request, "admin/modes/import_agent_files.html", **context)

    def export_view(self, request):
        """
        The published modes as a coding agent's files, as export_modes --to writes them, with the same report; the
        files to read on the page or to download as one .zip. It changes nothing: the view permission is enough.
        """
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = ExportForm(request.GET if "format" in request.GET else None)
        context = {"title": "Export for a coding agent", "form": form}
        if form.is_bound and form.is_valid():
            catalog = request.catalog  # the published catalog, as GET /api/catalog/export/ and export_modes write
            writing = AGENT_FORMATS[form.cleaned_data["format"]].write(
                catalog.exported_modes(custom_only=form.cleaned_data["custom_only"])
            )
            if "download" in request.GET:
                return zip_download(writing.files, name=f"aptix-modes-{form.cleaned_data['format']}.zip")
            context.update(files=writing.files, report=writing.report, revision=catalog.revision)
        return admin_page(self, request, "admin/modes/export_agent_files.html", **context)

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        return fieldsets if obj is None else [*fieldsets, self.preview_fieldset]

    def get_readonly_fields(self, request, obj=None):
        builtin = obj is not None and obj.source == AgentMode.Source.BUILTIN
        return [*self.readonly_fields, "key"] if builtin else self.readonly_fields

    # The preview: through the catalog's own functions, over the rows as saved (working_catalog), published or not.
    @admin.display(description="System prompt block")
    def system_prompt(self, mode):
        return format_html('<pre class="aptix-preview">{}</pre>', working_catalog().system_prompt(mode.key))

    @admin.display(description="Mode instructions")
    def instructions(self, mode):
        return format_html('<pre class="aptix-preview">{}</pre>', mode.instructions() or "None.")

    @admin.display(description="Tools")
    def enabled_tools(self, mode):
        if not is_string_list(mode.associated_tool_ids):  # written past the services: shown, so that it can be fixed
            stored = json.dumps(mode.associated_tool_ids)
            return f"None: the stored tool ids ({stored}) are not a list of tool names. Correct them above and save."
        catalog = working_catalog()
        unresolved = catalog.unresolved_tool_ids(mode.associated_tool_ids)
        warning = unresolved_tools_warning(mode.key, unresolved) if unresolved else ""
        context = {"mode": mode, "tools": catalog.tools_for_mode(mode), "unresolved": unresolved, "warning": warning}
        return render_to_string("modes/admin/tools_preview.html", context)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        unresolved = working_catalog().unresolved_tool_ids(obj.associated_tool_ids)
        if unresolved:
            self.message_user(request, unresolved_tools_warning(obj.key, unresolved), messages.WARNING)

    def has_delete_permission(self, request, obj=None):
        return not (obj and deletion_refusal(obj)) and super().has_delete_permission(request, obj)

    def delete_view(self, request, object_id, extra_context=None):
        mode = self.get_object(request, object_id)
        refusal = mode and deletion_refusal(mode)
        if refusal and super().has_delete_permission(request):  # why not, for those who may delete; others get 403
            self.message_user(request, f"Not deleted: {refusal}", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:modes_agentmode_change", args=[mode.pk]))
        return super().delete_view(request, object_id, extra_context)

    def left_as_is(self, identity: str, number: int) -> str | None:
        mode = AgentMode.objects.filter(pk=identity).first()
        return mode and default_not_reverted(mode=mode, number=number)

    @admin.action(description="Make the selected mode the default", permissions=["change"])
    def make_default(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one mode to make the default.", messages.ERROR)
            return
        mode = queryset.get()
        set_default_mode(mode=mode, changed_by=request.user)
        self.message_user(request, f"'{mode.key}' is now the default mode.", messages.SUCCESS)

    @admin.action(description="Delete selected agent modes", permissions=["delete"])
    def delete_selected(self, request, queryset):
        try:  # before Django's confirmation page, which would offer what cannot be done
            check_deletable(modes=queryset)
        except ModeDeletionRefused as error:
            self.message_user(request, f"Nothing deleted: {error}", messages.ERROR)
            return None
        return django_delete_selected(self, request, queryset)

    def delete_model(self, request, obj):
        delete_modes(modes=[obj], deleted_by=request.user)

    def delete_queryset(self, request, queryset):
        delete_modes(modes=queryset, deleted_by=request.user)


class JSONWithoutRepeatedKeys(json.JSONDecoder):
    """JSON whose objects give no key twice, as the API and the portable files take it: json keeps the last."""

    def __init__(self, **kwargs):
        super().__init__(**{**kwargs, "object_pairs_hook": refuse_duplicate_keys})


class SchemaJSONField(forms.JSONField):
    """A JSON Schema, indented to be read and edited. Text Python's JSON reader cannot take (nested too deeply, an
    integer of thousands of digits) is invalid JSON here, not a crash; a key given twice in one object is refused,
    not dropped unseen."""

    # Monospace from modes/admin.css: the pages' Content-Security-Policy allows no inline style.
    widget = forms.Textarea(attrs={"rows": 16, "cols": 80, "class": "aptix-code"})

    def __init__(self, **kwargs):
        super().__init__(**{**kwargs, "decoder": JSONWithoutRepeatedKeys})

    def to_python(self, value):
        try:
            return super().to_python(value)
        except DuplicateKey as error:
            message = f"The schema gives the key {error.key!r} twice in one object; keep one of them."
            raise forms.ValidationError(message, code="invalid") from None
        except (RecursionError, ValueError):
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid") from None

    def bound_data(self, data, initial):
        try:
            return super().bound_data(data, initial)
        except (RecursionError, ValueError):
            return InvalidJSONInput(data)

    def prepare_value(self, value):
        if isinstance(value, InvalidJSONInput):
            return value
        text = json.dumps(value, indent=2, ensure_ascii=False, cls=self.encoder)
        if unstorable_text(text):  # a lone surrogate cannot be sent as UTF-8: show it escaped
            text = json.dumps(value, indent=2, cls=self.encoder)
        return text


@admin.register(DeclaredTool)
class DeclaredToolAdmin(CatalogAdmin):
    kind, naming = TOOL, "name"
    list_display = ["name", "description", "read_only", "enabled_by"]
    search_fields = ["name", "description"]
    fields = ["name", "description", "parameters", "read_only", "enabled_by", "created_at", "updated_at"]
    readonly_fields = ["enabled_by", "created_at", "updated_at"]
    formfield_overrides = {models.JSONField: {"form_class": SchemaJSONField}}

    @admin.display(description="Enabled by modes (published)")
    def enabled_by(self, tool, catalog=None):
        keys = [mode.key for mode in (catalog or published_catalog()).modes if tool.name in mode.associated_tool_ids]
        return ", ".join(keys) or "No mode lists it yet."

    def get_list_display(self, request):
        # The list reads the published catalog once (request.catalog), not once per tool listed.
        enabled_by = admin.display(description=self.enabled_by.short_description)(
            lambda tool: self.enabled_by(tool, request.catalog)
        )
        return [*self.list_display[:-1], enabled_by]


def unresolved_tools_warning(key: str, unresolved: list[str]) -> str:
    return f"Warning (modes.W001): {unresolved_tools_message(key, unresolved)} {UNRESOLVED_TOOLS_HINT}"


def release_banner(request) -> None:
    """While a revision is pending, say on the page which revision agents see and how far the pending one is."""
    pending = pending_release()
    if pending is None:
        return
    published, number, approvals = pending
    text = 'Agents see revision {}; revision {} is pending with {} of {} approvals. <a href="{}">Catalog releases</a>'
    link = reverse("admin:modes_catalogrevision_releases")
    messages.warning(request, format_html(text, published, number, approvals, settings.CATALOG_APPROVALS, link))


def _staging(form) -> Staging:
    """
    The staged publication the page's form asks for, judged as the API judges its body (PublishRequest), with the
    rollout the page showed: a page opened before someone else staged, promoted or aborted the revision changes
    nothing (check_seen_rollout), and one that showed an aborted rollout asks for its restart.
    """
    guard = {"metric": form.get("guard_metric"), "ratio": form.get("guard_ratio"), "minSessions": form.get("guard_min_sessions")}
    slugs = [slug.strip() for slug in form.get("organizations", "").split(",") if slug.strip()]
    body = {
        **({"share": form["share"]} if form.get("share") else {}), "organizations": slugs,
        **({"guard": guard} if guard["metric"] else {}), **({"restart": True} if form.get("restart") else {}),
    }
    return replace(_as_the_api_judges(PublishRequest.staging, body), seen_rollout=form.get("seen_rollout"))


def _abort_reason(form) -> str:
    """The reason the page's form gives for an abort, judged as the API judges its body (AbortRequest)."""
    return _as_the_api_judges(AbortRequest.validated, {"reason": form.get("reason", "")})["reason"]


def _as_the_api_judges(validate, body):
    """validate(body), an API request's rule; its refusal a message on the page (as commands' validated_options)."""
    try:
        return validate(body)
    except ValidationError as error:
        raise InvalidInput(error_message(error.detail)) from None


RELEASE_ACTIONS = {
    # the action in the page's address: (who may ask for it, as the releases page offers it; what does it, given the
    # request and the revision's number; the question its confirmation asks, the yes, and the form's fields, if any)
    "approve": (
        lambda user: may(user, "approve_revision"),
        lambda request, number: approve_revision(number=number, user=request.user), "Approve revision {number}?",
        "Yes, approve it", None,
    ),
    "publish": (
        may_publish, lambda request, number: publish_revision(number=number, user=request.user),
        "Publish revision {number} to agents?", "Yes, publish it", None,
    ),
    "stage": (
        may_publish,
        lambda request, number: publish_revision(number=number, user=request.user, staging=_staging(request.POST)),
        "Roll revision {number} out to part of the sessions first (or, being rolled out, to more)?", "Yes, roll it out",
        "admin/modes/rollout_fields.html",
    ),
    "promote": (
        may_publish, lambda request, number: promote_rollout(number=number, user=request.user),
        "Publish revision {number}, being rolled out, to every session?", "Yes, promote it", None,
    ),
    "abort": (
        may_publish,
        lambda request, number: abort_rollout(number=number, user=request.user, reason=_abort_reason(request.POST)),
        "Abort the rollout of revision {number}? Its sessions are served the published revision again.",
        "Yes, abort it", "admin/modes/abort_fields.html",
    ),
    "roll-back": (
        lambda user: may(user, "publish_revision"),
        lambda request, number: publish_revision(number=number, user=request.user),
        "Roll the catalog back to revision {number}? Agents are served it at once.", "Yes, roll back", None,
    ),
    "evaluate": (
        lambda user: may(user, "add_routingevaluation"),
        lambda request, number: run_offline_evaluation(number=number, user=request.user),
        "Score revision {number} on the routing cases with the offline scorer?", "Yes, evaluate", None,
    ),
}
DONE = {
    "approve": "Revision {number} is approved.", "evaluate": "Revision {number} is evaluated.",
    "stage": "Revision {number} is being rolled out.", "promote": "Revision {number} is published to every session.",
    "abort": "The rollout of revision {number} is aborted.",
}


@admin.register(CatalogRevision)
class CatalogRevisionAdmin(ReadOnlyAdmin, LargeTableAdmin):
    """Revisions, read-only (the catalog writes them), and the Catalog releases page: the published and the pending
    revision with what it changes; approve, publish and roll back, each confirmed first (modes.releases)."""

    list_display = ["number", "created_at", "created_by", "summary"]
    list_select_related = ["created_by"]
    fields = ["number", "created_at", "created_by", "summary", "catalog"]
    readonly_fields = fields

    def catalog(self, revision):
        return json.dumps(revision.catalog, ensure_ascii=False)

    def get_urls(self):
        action = self.admin_site.admin_view(self.release_action_view)
        return [
            path("releases/", self.admin_site.admin_view(self.releases_view), name="modes_catalogrevision_releases"),
            path("releases/<int:number>/<slug:action>/", action, name="modes_catalogrevision_release_action"),
            *super().get_urls(),
        ]

    def releases_view(self, request):
        if not self.has_view_permission(request):  # it shows unreleased text, as the revision list does
            raise PermissionDenied
        summary = release_summary()
        pending, staged = summary["pending"], summary["staged"]
        context = {
            "title": "Catalog releases", "pending_diff": pending and _shown_diff(pending.number),
            "staged_diff": staged and _shown_diff(staged.number),
            "routing": routing_evaluations(pending or summary["published"], request.user),
            "may": release_actions(request.user, summary), **summary, **self.rollout_context(request, summary),
        }
        return admin_page(self, request, "admin/modes/catalog_releases.html", **context)

    def rollout_context(self, request, summary) -> dict:
        """What the page shows of the rollout beyond its row: sessions_app's admin adds how the cohorts fare."""
        return {}

    def release_action_view(self, request, number, action):
        if action not in RELEASE_ACTIONS:
            raise Http404(f"No release action {action!r}.")
        may_ask, service, question, confirm, fields = RELEASE_ACTIONS[action]
        if not self.has_view_permission(request):
            raise PermissionDenied
        releases_url = reverse("admin:modes_catalogrevision_releases")
        if request.method == "POST":
            try:
                revision = service(request, number)
            except ServiceError as error:
                self.message_user(request, str(error), messages.ERROR)
            else:
                done = DONE.get(action, "Revision {number} is published to agents.")
                self.message_user(request, done.format(number=getattr(revision, "number", number)), messages.SUCCESS)
            return HttpResponseRedirect(releases_url)
        if not may_ask(request.user):  # the page offers no button it would refuse (a POST: the service says why)
            raise PermissionDenied
        if not CatalogRevision.objects.filter(number=number).exists():  # past the column's range too
            raise Http404(f"There is no catalog revision {number}.")
        # The revision's latest rollout, which the form names (_staging): in flight, its share is where raising it
        # starts; aborted, the form rolls it out again, and says so.
        seen = CatalogRollout.objects.filter(revision_id=number).order_by("-started_at").first()
        state, State = seen and seen.state, CatalogRollout.State
        context = {
            "title": question.format(number=number), "confirm": confirm, "releases_url": releases_url, "fields": fields,
            "metrics": CatalogRollout.Metric.choices, "share": seen.share if state == State.IN_FLIGHT else 10,
            "seen_rollout": seen.pk if seen else "", "aborted": seen if state == State.ABORTED else None,
        }
        return admin_page(self, request, "admin/modes/catalog_release_confirm.html", **context)


# The page shows this many changed modes; the API's diff pages through them all.
RELEASES_PAGE_MODES = 100
HEAT_BUCKETS = 5  # the heat map's shades: a cell's share of its row, in fifths
HEAT_LABELS = 40  # the heat map's rows and columns at most: the modes most confused, the API has them all
SHOWN_FAILURES = 100  # failing cases listed on the page; the API lists them all


def _shown_diff(number: int) -> dict:
    """What publishing revision number changes, as the releases page shows it (admin/modes/revision_diff.html)."""
    diff = revision_diff(number=number)
    modes = [mode for mode in diff["modes"] if mode["change"] != "unchanged" or any(mode["tools"].values())]
    tools = [tool for tool in diff["declaredTools"] if tool["change"] != "unchanged"]
    for tool in tools:  # parameters as the JSON the model is sent
        tool["fields"] = {name: {side: _shown(value) for side, value in values.items()}
                          for name, values in tool["fields"].items()}
    return {"number": number, "prompt": diff["prompt"], "modes": modes[:RELEASES_PAGE_MODES],
            "more_modes": len(modes[RELEASES_PAGE_MODES:]), "tools": tools}


def routing_evaluations(revision, user) -> dict | None:
    """The latest evaluation of revision by each scorer, with its confusion matrix as heat-map rows, for the page."""
    if revision is None or not may(user, "view_routingevaluation"):
        return None
    evaluations = []
    for scorer in ("offline", "llm"):
        if evaluation := latest_evaluation(number=revision.number, scorer=scorer):
            shown = RoutingEvaluationResponse(evaluation_payload(evaluation)).data
            evaluations.append({
                **shown, "heat": heat_rows(shown), "heat_labels": heat_labels(shown),
                "shown_failures": shown["failures"][:SHOWN_FAILURES],
                "more_failures": max(len(shown["failures"]) - SHOWN_FAILURES, 0),
            })
    return {"revision": revision.number, "evaluations": evaluations,
            "may_evaluate": may(user, "add_routingevaluation")}


def heat_labels(evaluation: dict) -> list[str]:
    """The heat map's labels, in catalog order: all of them, or the HEAT_LABELS most confused (a catalog of 1,000
    modes would draw a million cells)."""
    labels = evaluation["labels"]
    if len(labels) <= HEAT_LABELS:
        return labels
    confused = Counter()
    for expected, row in evaluation["confusion"].items():
        for predicted, count in row.items():
            if predicted != expected:
                confused[expected] += count
                confused[predicted] += count
    kept = {label for label, _ in confused.most_common(HEAT_LABELS)}
    return [label for label in labels if label in kept]


def heat_rows(evaluation: dict) -> list[dict]:
    """Per expected label with cases: its cells in heat_labels' order, each a count and a CSS class for its share of
    the row (the admin's CSP allows no inline style), and the label's precision and recall."""
    rows, labels = [], heat_labels(evaluation)
    for expected in labels:
        counts = evaluation["confusion"].get(expected, {})
        total = sum(counts.values())
        if not total:
            continue
        cells = []
        for predicted in labels:
            count = counts.get(predicted, 0)
            bucket = -(-count * HEAT_BUCKETS // total)  # 0 only for no case; 1 to 5 by fifths, rounded up
            kind = "right" if predicted == expected else "wrong"
            cells.append({"count": count, "css": f"aptix-heat-{kind}-{bucket}"})
        rows.append({"expected": expected, "cells": cells, "total": total, **evaluation["perMode"][expected]})
    return rows


class RoutingCaseForm(forms.ModelForm):
    class Meta:
        model = RoutingCase
        fields = ["utterance", "current_mode", "expected"]
        widgets = {"utterance": forms.Textarea(attrs={"rows": 3, "class": "aptix-wide"})}

    def clean(self):
        cleaned = super().clean()
        if not self.errors:
            case = RoutingCase(**{name: cleaned.get(name) or "" for name in self.Meta.fields})
            for field, problem in mode_problems(case, keys=mode_keys()).items():
                self.add_error(field, problem)
        if not self.errors:  # the admin saves in this transaction: under the lock room_problems takes
            for problem in room_problems(adding=self.instance._state.adding):
                self.add_error(None, problem)
        return cleaned


class RoutingCasesImportForm(forms.Form):
    file = forms.FileField(help_text="JSON Lines (.jsonl) or CSV (.csv), as export writes them.")
    update = forms.BooleanField(required=False, help_text="Change the expected mode of cases that exist.")
    dry_run = forms.BooleanField(required=False, help_text="Check and report; change nothing.")


@admin.register(RoutingCase)
class RoutingCaseAdmin(admin.ModelAdmin):
    """The routing evaluations' test set: an utterance, the mode the session is in, and where it should go; imported
    and exported as files, all or none, as the commands do."""

    form = RoutingCaseForm
    change_list_template = "admin/modes/routingcase_change_list.html"
    list_display = ["utterance", "current_mode", "expected", "updated_at"]
    list_filter = ["expected", "current_mode"]
    search_fields = ["utterance"]

    def get_urls(self):
        import_page = self.admin_site.admin_view(self.import_view)
        export_file = self.admin_site.admin_view(require_safe(self.export_view))
        return [
            path("import/", import_page, name="modes_routingcase_import"),
            path("export/<slug:file_format>/", export_file, name="modes_routingcase_export"),
            *super().get_urls(),
        ]

    def may_import(self, request) -> bool:
        return self.has_add_permission(request) and self.has_change_permission(request)

    def changelist_view(self, request, extra_context=None):
        may = {"may_import": self.may_import(request), "file_formats": CASE_FILE_FORMATS}
        return super().changelist_view(request, {**may, **(extra_context or {})})

    def import_view(self, request):
        if not self.may_import(request):
            raise PermissionDenied
        form = RoutingCasesImportForm(request.POST, request.FILES) if request.method == "POST" else RoutingCasesImportForm()
        context = {"title": "Import routing cases", "form": form}
        if form.is_bound and form.is_valid():
            upload = form.cleaned_data["file"]
            file_format = upload.name.rpartition(".")[2].lower()
            try:
                if file_format not in CASE_FILE_FORMATS:
                    raise InvalidRoutingCase([f"{upload.name}: name it .jsonl or .csv, as export writes them."])
                if upload.size > settings.API_MAX_IMPORT_BYTES:
                    raise InvalidRoutingCase([f"The file is larger than the {settings.API_MAX_IMPORT_BYTES:,} bytes an import takes."])
                try:
                    text = upload.read().decode("utf-8-sig")
                except UnicodeDecodeError:
                    raise InvalidRoutingCase([f"{upload.name}: not UTF-8 text."]) from None
                context["counts"] = import_cases(
                    text=text, file_format=file_format, update=form.cleaned_data["update"],
                    dry_run=form.cleaned_data["dry_run"],
                )
            except InvalidRoutingCase as error:
                context["problems"] = error.problems
            context["dry_run"] = form.cleaned_data["dry_run"]
        return admin_page(self, request, "admin/modes/import_routing_cases.html", **context)

    def export_view(self, request, file_format):
        if not self.has_view_permission(request):
            raise PermissionDenied
        if file_format not in CASE_FILE_FORMATS:
            raise Http404(f"No export as {file_format!r}.")
        content_type = "application/jsonl" if file_format == "jsonl" else "text/csv"
        response = HttpResponse(export_cases(file_format=file_format), content_type=f"{content_type}; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="routing-cases.{file_format}"'
        return response


def _shown(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@admin.register(ArchivedHistory)
class ArchivedHistoryAdmin(ReadOnlyAdmin):
    """States that the per-row history kept and no revision holds, carried over when it was retired: read-only."""

    list_display = ["changed_at", "kind", "name", "change", "changed_by"]
    list_filter = ["kind", "change"]
    search_fields = ["name", "identity"]
    list_select_related = ["changed_by"]
