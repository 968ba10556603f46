"""MIMIC-IV tables: official column names, order and types (hosp, icu; ed and note modules).

Declared once here and used by the loader, the synthetic generator and the fixtures.

Source of the column lists: mimic-code's buildmimic create scripts for MIMIC-IV v2.2
(`mimic-iv/buildmimic/postgres/create.sql`, which v3.1 shares), MIMIC-IV-ED
(`mimic-iv-ed/buildmimic/postgres/create.sql`) and MIMIC-IV-Note
(`mimic-iv-note/buildmimic/postgres/create.sql`); names and order checked against the
headers of the official demo v2.2 files. Postgres types map to DuckDB as: INTEGER ->
INTEGER, SMALLINT -> SMALLINT, FLOAT / REAL / DOUBLE PRECISION / NUMERIC -> DOUBLE,
CHAR / VARCHAR / TEXT -> VARCHAR, TIMESTAMP(n) -> TIMESTAMP, DATE -> DATE.

Deliberate deviations from the create scripts, each for a reason:
- ``labevents.labevent_id`` and ``specimen_id``, ``microbiologyevents.microevent_id``,
  ``*.orderid`` / ``linkorderid`` are BIGINT: the full database's identifiers approach
  the INTEGER limit in later releases and widening costs nothing.
- Columns the create script keeps as text because the source holds text
  (``emar_detail.dose_given``, ``pharmacy.one_hr_max``, ...) stay VARCHAR: casting
  them would fail on real rows.

The PhysioNet file of each table is ``<module>/<table>.csv.gz`` (module = the schema
name without the ``mimiciv_`` prefix), e.g. ``hosp/patients.csv.gz``.
"""

from clinbench.ehr.schema import Table, columns

HOSP = "mimiciv_hosp"
ICU = "mimiciv_icu"
ED = "mimiciv_ed"
NOTE = "mimiciv_note"


def _t(schema: str, name: str, spec: str) -> Table:
    return Table(schema, name, columns(spec), source=f"{schema.removeprefix('mimiciv_')}/{name}")


MIMIC_IV_TABLES: tuple[Table, ...] = (
    # --- hosp -------------------------------------------------------------------------
    _t(HOSP, "admissions", """
        subject_id INTEGER, hadm_id INTEGER, admittime TIMESTAMP, dischtime TIMESTAMP,
        deathtime TIMESTAMP, admission_type VARCHAR, admit_provider_id VARCHAR,
        admission_location VARCHAR, discharge_location VARCHAR, insurance VARCHAR,
        language VARCHAR, marital_status VARCHAR, race VARCHAR, edregtime TIMESTAMP,
        edouttime TIMESTAMP, hospital_expire_flag SMALLINT"""),
    _t(HOSP, "d_hcpcs", """
        code VARCHAR, category SMALLINT, long_description VARCHAR, short_description VARCHAR"""),
    _t(HOSP, "d_icd_diagnoses", "icd_code VARCHAR, icd_version SMALLINT, long_title VARCHAR"),
    _t(HOSP, "d_icd_procedures", "icd_code VARCHAR, icd_version SMALLINT, long_title VARCHAR"),
    _t(HOSP, "d_labitems", "itemid INTEGER, label VARCHAR, fluid VARCHAR, category VARCHAR"),
    _t(HOSP, "diagnoses_icd", """
        subject_id INTEGER, hadm_id INTEGER, seq_num INTEGER, icd_code VARCHAR,
        icd_version SMALLINT"""),
    _t(HOSP, "drgcodes", """
        subject_id INTEGER, hadm_id INTEGER, drg_type VARCHAR, drg_code VARCHAR,
        description VARCHAR, drg_severity SMALLINT, drg_mortality SMALLINT"""),
    _t(HOSP, "emar", """
        subject_id INTEGER, hadm_id INTEGER, emar_id VARCHAR, emar_seq INTEGER, poe_id VARCHAR,
        pharmacy_id INTEGER, enter_provider_id VARCHAR, charttime TIMESTAMP, medication VARCHAR,
        event_txt VARCHAR, scheduletime TIMESTAMP, storetime TIMESTAMP"""),
    _t(HOSP, "emar_detail", """
        subject_id INTEGER, emar_id VARCHAR, emar_seq INTEGER, parent_field_ordinal VARCHAR,
        administration_type VARCHAR, pharmacy_id INTEGER, barcode_type VARCHAR,
        reason_for_no_barcode VARCHAR, complete_dose_not_given VARCHAR, dose_due VARCHAR,
        dose_due_unit VARCHAR, dose_given VARCHAR, dose_given_unit VARCHAR,
        will_remainder_of_dose_be_given VARCHAR, product_amount_given VARCHAR,
        product_unit VARCHAR, product_code VARCHAR, product_description VARCHAR,
        product_description_other VARCHAR, prior_infusion_rate VARCHAR, infusion_rate VARCHAR,
        infusion_rate_adjustment VARCHAR, infusion_rate_adjustment_amount VARCHAR,
        infusion_rate_unit VARCHAR, route VARCHAR, infusion_complete VARCHAR,
        completion_interval VARCHAR, new_iv_bag_hung VARCHAR,
        continued_infusion_in_other_location VARCHAR, restart_interval VARCHAR, side VARCHAR,
        site VARCHAR, non_formulary_visual_verification VARCHAR"""),
    _t(HOSP, "hcpcsevents", """
        subject_id INTEGER, hadm_id INTEGER, chartdate DATE, hcpcs_cd VARCHAR, seq_num INTEGER,
        short_description VARCHAR"""),
    _t(HOSP, "labevents", """
        labevent_id BIGINT, subject_id INTEGER, hadm_id INTEGER, specimen_id BIGINT,
        itemid INTEGER, order_provider_id VARCHAR, charttime TIMESTAMP, storetime TIMESTAMP,
        value VARCHAR, valuenum DOUBLE, valueuom VARCHAR, ref_range_lower DOUBLE,
        ref_range_upper DOUBLE, flag VARCHAR, priority VARCHAR, comments VARCHAR"""),
    _t(HOSP, "microbiologyevents", """
        microevent_id BIGINT, subject_id INTEGER, hadm_id INTEGER, micro_specimen_id INTEGER,
        order_provider_id VARCHAR, chartdate TIMESTAMP, charttime TIMESTAMP, spec_itemid INTEGER,
        spec_type_desc VARCHAR, test_seq INTEGER, storedate TIMESTAMP, storetime TIMESTAMP,
        test_itemid INTEGER, test_name VARCHAR, org_itemid INTEGER, org_name VARCHAR,
        isolate_num SMALLINT, quantity VARCHAR, ab_itemid INTEGER, ab_name VARCHAR,
        dilution_text VARCHAR, dilution_comparison VARCHAR, dilution_value DOUBLE,
        interpretation VARCHAR, comments VARCHAR"""),
    _t(HOSP, "omr", """
        subject_id INTEGER, chartdate DATE, seq_num INTEGER, result_name VARCHAR,
        result_value VARCHAR"""),
    _t(HOSP, "patients", """
        subject_id INTEGER, gender VARCHAR, anchor_age SMALLINT, anchor_year SMALLINT,
        anchor_year_group VARCHAR, dod DATE"""),
    _t(HOSP, "pharmacy", """
        subject_id INTEGER, hadm_id INTEGER, pharmacy_id INTEGER, poe_id VARCHAR,
        starttime TIMESTAMP, stoptime TIMESTAMP, medication VARCHAR, proc_type VARCHAR,
        status VARCHAR, entertime TIMESTAMP, verifiedtime TIMESTAMP, route VARCHAR,
        frequency VARCHAR, disp_sched VARCHAR, infusion_type VARCHAR, sliding_scale VARCHAR,
        lockout_interval VARCHAR, basal_rate DOUBLE, one_hr_max VARCHAR,
        doses_per_24_hrs DOUBLE, duration DOUBLE, duration_interval VARCHAR,
        expiration_value INTEGER, expiration_unit VARCHAR, expirationdate TIMESTAMP,
        dispensation VARCHAR, fill_quantity VARCHAR"""),
    _t(HOSP, "poe", """
        poe_id VARCHAR, poe_seq INTEGER, subject_id INTEGER, hadm_id INTEGER,
        ordertime TIMESTAMP, order_type VARCHAR, order_subtype VARCHAR,
        transaction_type VARCHAR, discontinue_of_poe_id VARCHAR, discontinued_by_poe_id VARCHAR,
        order_provider_id VARCHAR, order_status VARCHAR"""),
    _t(HOSP, "poe_detail", """
        poe_id VARCHAR, poe_seq INTEGER, subject_id INTEGER, field_name VARCHAR,
        field_value VARCHAR"""),
    _t(HOSP, "prescriptions", """
        subject_id INTEGER, hadm_id INTEGER, pharmacy_id INTEGER, poe_id VARCHAR,
        poe_seq INTEGER, order_provider_id VARCHAR, starttime TIMESTAMP, stoptime TIMESTAMP,
        drug_type VARCHAR, drug VARCHAR, formulary_drug_cd VARCHAR, gsn VARCHAR, ndc VARCHAR,
        prod_strength VARCHAR, form_rx VARCHAR, dose_val_rx VARCHAR, dose_unit_rx VARCHAR,
        form_val_disp VARCHAR, form_unit_disp VARCHAR, doses_per_24_hrs DOUBLE, route VARCHAR"""),
    _t(HOSP, "procedures_icd", """
        subject_id INTEGER, hadm_id INTEGER, seq_num INTEGER, chartdate DATE, icd_code VARCHAR,
        icd_version SMALLINT"""),
    _t(HOSP, "provider", "provider_id VARCHAR"),
    _t(HOSP, "services", """
        subject_id INTEGER, hadm_id INTEGER, transfertime TIMESTAMP, prev_service VARCHAR,
        curr_service VARCHAR"""),
    _t(HOSP, "transfers", """
        subject_id INTEGER, hadm_id INTEGER, transfer_id INTEGER, eventtype VARCHAR,
        careunit VARCHAR, intime TIMESTAMP, outtime TIMESTAMP"""),
    # --- icu --------------------------------------------------------------------------
    _t(ICU, "caregiver", "caregiver_id INTEGER"),
    _t(ICU, "chartevents", """
        subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, caregiver_id INTEGER,
        charttime TIMESTAMP, storetime TIMESTAMP, itemid INTEGER, value VARCHAR,
        valuenum DOUBLE, valueuom VARCHAR, warning SMALLINT"""),
    _t(ICU, "d_items", """
        itemid INTEGER, label VARCHAR, abbreviation VARCHAR, linksto VARCHAR, category VARCHAR,
        unitname VARCHAR, param_type VARCHAR, lownormalvalue DOUBLE, highnormalvalue DOUBLE"""),
    _t(ICU, "datetimeevents", """
        subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, caregiver_id INTEGER,
        charttime TIMESTAMP, storetime TIMESTAMP, itemid INTEGER, value TIMESTAMP,
        valueuom VARCHAR, warning SMALLINT"""),
    _t(ICU, "icustays", """
        subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, first_careunit VARCHAR,
        last_careunit VARCHAR, intime TIMESTAMP, outtime TIMESTAMP, los DOUBLE"""),
    _t(ICU, "ingredientevents", """
        subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, caregiver_id INTEGER,
        starttime TIMESTAMP, endtime TIMESTAMP, storetime TIMESTAMP, itemid INTEGER,
        amount DOUBLE, amountuom VARCHAR, rate DOUBLE, rateuom VARCHAR, orderid BIGINT,
        linkorderid BIGINT, statusdescription VARCHAR, originalamount DOUBLE,
        originalrate DOUBLE"""),
    _t(ICU, "inputevents", """
        subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, caregiver_id INTEGER,
        starttime TIMESTAMP, endtime TIMESTAMP, storetime TIMESTAMP, itemid INTEGER,
        amount DOUBLE, amountuom VARCHAR, rate DOUBLE, rateuom VARCHAR, orderid BIGINT,
        linkorderid BIGINT, ordercategoryname VARCHAR, secondaryordercategoryname VARCHAR,
        ordercomponenttypedescription VARCHAR, ordercategorydescription VARCHAR,
        patientweight DOUBLE, totalamount DOUBLE, totalamountuom VARCHAR, isopenbag SMALLINT,
        continueinnextdept SMALLINT, statusdescription VARCHAR, originalamount DOUBLE,
        originalrate DOUBLE"""),
    _t(ICU, "outputevents", """
        subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, caregiver_id INTEGER,
        charttime TIMESTAMP, storetime TIMESTAMP, itemid INTEGER, value DOUBLE,
        valueuom VARCHAR"""),
    _t(ICU, "procedureevents", """
        subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, caregiver_id INTEGER,
        starttime TIMESTAMP, endtime TIMESTAMP, storetime TIMESTAMP, itemid INTEGER,
        value DOUBLE, valueuom VARCHAR, location VARCHAR, locationcategory VARCHAR,
        orderid BIGINT, linkorderid BIGINT, ordercategoryname VARCHAR,
        ordercategorydescription VARCHAR, patientweight DOUBLE, isopenbag SMALLINT,
        continueinnextdept SMALLINT, statusdescription VARCHAR, originalamount DOUBLE,
        originalrate DOUBLE"""),
    # --- ed (MIMIC-IV-ED, a separate PhysioNet module; loaded when present) -----------
    _t(ED, "diagnosis", """
        subject_id INTEGER, stay_id INTEGER, seq_num INTEGER, icd_code VARCHAR,
        icd_version SMALLINT, icd_title VARCHAR"""),
    _t(ED, "edstays", """
        subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, intime TIMESTAMP,
        outtime TIMESTAMP, gender VARCHAR, race VARCHAR, arrival_transport VARCHAR,
        disposition VARCHAR"""),
    _t(ED, "medrecon", """
        subject_id INTEGER, stay_id INTEGER, charttime TIMESTAMP, name VARCHAR, gsn VARCHAR,
        ndc VARCHAR, etc_rn SMALLINT, etccode VARCHAR, etcdescription VARCHAR"""),
    _t(ED, "pyxis", """
        subject_id INTEGER, stay_id INTEGER, charttime TIMESTAMP, med_rn SMALLINT, name VARCHAR,
        gsn_rn SMALLINT, gsn VARCHAR"""),
    # pain and acuity: pain is free text in the source ("8", "unable", ...); acuity 1-5.
    _t(ED, "triage", """
        subject_id INTEGER, stay_id INTEGER, temperature DOUBLE, heartrate DOUBLE,
        resprate DOUBLE, o2sat DOUBLE, sbp DOUBLE, dbp DOUBLE, pain VARCHAR, acuity DOUBLE,
        chiefcomplaint VARCHAR"""),
    _t(ED, "vitalsign", """
        subject_id INTEGER, stay_id INTEGER, charttime TIMESTAMP, temperature DOUBLE,
        heartrate DOUBLE, resprate DOUBLE, o2sat DOUBLE, sbp INTEGER, dbp INTEGER,
        rhythm VARCHAR, pain VARCHAR"""),
    # --- note (MIMIC-IV-Note, a separate PhysioNet module; loaded when present) -------
    _t(NOTE, "discharge", """
        note_id VARCHAR, subject_id INTEGER, hadm_id INTEGER, note_type VARCHAR,
        note_seq SMALLINT, charttime TIMESTAMP, storetime TIMESTAMP, text VARCHAR"""),
    _t(NOTE, "discharge_detail", """
        note_id VARCHAR, subject_id INTEGER, field_name VARCHAR, field_value VARCHAR,
        field_ordinal INTEGER"""),
    _t(NOTE, "radiology", """
        note_id VARCHAR, subject_id INTEGER, hadm_id INTEGER, note_type VARCHAR,
        note_seq SMALLINT, charttime TIMESTAMP, storetime TIMESTAMP, text VARCHAR"""),
    _t(NOTE, "radiology_detail", """
        note_id VARCHAR, subject_id INTEGER, field_name VARCHAR, field_value VARCHAR,
        field_ordinal INTEGER"""),
)

# Modules that a MIMIC-IV copy must have; ed and note are separate, optional projects.
CORE_SCHEMAS = (HOSP, ICU)
