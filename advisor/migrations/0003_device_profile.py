import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("advisor", "0002_recommendation_json_encoder"),
    ]

    operations = [
        migrations.AddField(
            model_name="device",
            name="profile",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="device",
            name="torch_version",
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.AddField(
            model_name="device",
            name="processor",
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.CreateModel(
            name="TimeModel",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("version", models.PositiveIntegerField()),
                ("rows", models.PositiveIntegerField()),
                ("networks", models.PositiveIntegerField()),
                ("expected_error", models.FloatField()),
                ("median_error", models.FloatField()),
                ("fitted", models.BinaryField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "device",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="time_models",
                        to="advisor.device",
                    ),
                ),
            ],
            options={
                "ordering": ["device", "-version"],
                "constraints": [
                    models.UniqueConstraint(fields=("device", "version"), name="one_time_model_version")
                ],
            },
        ),
    ]
