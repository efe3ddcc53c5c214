"""
The admin's export form, and the files of an export as one .zip to download, each at its path in the repository.
"""

import io
import zipfile

from django import forms
from django.http import HttpResponse

from .base import AgentFile
from .formats import FORMATS


class ExportForm(forms.Form):
    format = forms.ChoiceField(choices=[(name, name) for name in FORMATS], help_text="The coding agent whose files to write.")
    custom_only = forms.BooleanField(required=False, help_text="Leave out the built-in modes.")


def zip_download(files: list[AgentFile], *, name: str) -> HttpResponse:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in files:
            archive.writestr(file.path, file.content)
    response = HttpResponse(buffer.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
