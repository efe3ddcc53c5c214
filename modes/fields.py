"""A JSON list of one-line strings, edited in forms one item per line."""

from django import forms
from django.db import models

from .validators import validate_string_list


class LineListFormField(forms.Field):
    """Shows a list as lines of text and reads it back, dropping blank lines."""

    # wrap="off": a long item stays on its one line (scrolled sideways) rather than wrapping to look like two.
    widget = forms.Textarea(attrs={"rows": 4, "wrap": "off", "class": "aptix-wide aptix-lines"})
    LINES_HELP = "One item per line; a long item stays on its line. Blank lines are dropped."

    def __init__(self, *, help_text="", **kwargs):
        super().__init__(help_text=f"{help_text} {self.LINES_HELP}".strip(), **kwargs)

    def prepare_value(self, value):
        return "\n".join(str(item) for item in value) if isinstance(value, list) else value

    def to_python(self, value):
        if isinstance(value, list):
            return value
        return [line.strip() for line in str(value or "").splitlines() if line.strip()]


class StringListField(models.JSONField):
    default_validators = [validate_string_list]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{"default": list, "blank": True, **kwargs})

    def formfield(self, **kwargs):
        # Skip JSONField.formfield: its raw-JSON form field is what we replace.
        return models.Field.formfield(self, **{"form_class": LineListFormField, **kwargs})
