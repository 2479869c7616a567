from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("advisor", "0006_time_model_validation"),
    ]

    operations = [
        migrations.AddField(
            model_name="recommendation",
            name="engine_version",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
