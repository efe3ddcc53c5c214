"""A JSON list of one-line strings, edited in forms one item per line."""

from django import forms
from django.db import models

from .validators import validate_string_list


class LineListFormField(forms.Field):
    """Shows a list as lines of text and reads it back, dropping blank lines."""

    widget = forms.Textarea(attrs={"rows": 4})

    def prepare_value(self, value):
        if isinstance(value, list):
            return "\n".join(str(item) for item in value)
        return value

    def to_python(self, value):
        if value in self.empty_values:
            return []
        if isinstance(value, list):
            return value
        return [line.strip() for line in str(value).splitlines() if line.strip()]


class StringListField(models.JSONField):
    default_validators = [validate_string_list]

    def formfield(self, **kwargs):
        # Skip JSONField.formfield: its raw-JSON form field is what we replace.
        return models.Field.formfield(self, **{"form_class": LineListFormField, **kwargs})
